// A Messages request (chat-formats.md §1.2) as an OpenAI chat request (§3.1–3.4). Pure: the
// output is a function of the input, so a fixture pins it whole.
import { invalidRequest } from '../../errors.js';
import type {
  ContentBlockParam,
  CustomTool,
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  MessagesRequest,
  TextBlockParam,
  Tool,
  ToolChoice,
  ToolResultBlockParam,
} from '../anthropic/types.js';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolCall, ChatToolChoice } from './types.js';

/**
 * Fields not named here (`thinking`, `service_tier`, `container`, …) have no chat meaning and are
 * dropped: forwarded, an OpenAI upstream would refuse them as unknown.
 */
export function messagesToChatRequest(req: MessagesRequest, opts: { upstreamModel: string }): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = systemText(req.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  req.messages.forEach((message, i) => messages.push(...chatMessagesOf(message, `messages[${i}]`)));

  const chat: ChatRequest = { model: opts.upstreamModel, messages, max_tokens: req.max_tokens };
  if (req.temperature !== undefined) chat.temperature = req.temperature;
  if (req.top_p !== undefined) chat.top_p = req.top_p;
  // top_k: chat completions has none, and OpenAI refuses unknown fields
  if (req.stop_sequences && req.stop_sequences.length > 0) chat.stop = req.stop_sequences;
  if (typeof req.metadata?.user_id === 'string') chat.user = req.metadata.user_id;

  const tools = (req.tools ?? []).filter(isCustomTool).map(chatToolOf);
  if (tools.length > 0) {
    chat.tools = tools;
    // tool_choice and parallel_tool_calls without tools are a 400 on OpenAI
    if (req.tool_choice) {
      chat.tool_choice = toolChoiceOf(req.tool_choice);
      if (req.tool_choice.type !== 'none' && req.tool_choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
    }
  }

  if (req.stream !== undefined) chat.stream = req.stream;
  // without it an OpenAI stream carries no usage, and message_delta has nothing true to say
  if (req.stream === true) chat.stream_options = { include_usage: true };
  return chat;
}

function systemText(system: MessagesRequest['system']): string | undefined {
  if (system === undefined) return undefined;
  const text = typeof system === 'string' ? system : system.map((block) => block.text).join('\n\n');
  return text === '' ? undefined : text;
}

function chatMessagesOf(message: MessageParam, at: string): ChatMessage[] {
  if (typeof message.content === 'string') {
    return [message.role === 'user' ? { role: 'user', content: message.content } : { role: 'assistant', content: message.content }];
  }
  return message.role === 'user' ? userMessagesOf(message.content, at) : assistantMessagesOf(message.content);
}

/**
 * Tool results become `tool` messages placed first: they must directly follow the assistant turn
 * that made the calls, so the turn's own text and images come after them.
 */
function userMessagesOf(blocks: ContentBlockParam[], at: string): ChatMessage[] {
  const results: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  blocks.forEach((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    if (block.type === 'tool_result') results.push(toolMessageOf(block, blockAt));
    else if (block.type === 'text' || block.type === 'image' || block.type === 'document') parts.push(...partsOf(block, blockAt));
    // thinking and tool_use have no place in a user turn; dropped
  });
  if (parts.length === 0) return results;
  const only = parts.length === 1 ? parts[0] : undefined;
  // one text part as a plain string: the shape every OpenAI-compatible server accepts
  return [...results, { role: 'user', content: only?.type === 'text' ? only.text : parts }];
}

function toolMessageOf(block: ToolResultBlockParam, at: string): ChatMessage {
  // is_error has no chat field; the model reads the error from the content itself
  const content = block.content;
  if (content === undefined || typeof content === 'string') return { role: 'tool', tool_call_id: block.tool_use_id, content: content ?? '' };
  const parts = content.flatMap((item, k) => partsOf(item, `${at}.content[${k}]`));
  const only = parts.length === 1 ? parts[0] : undefined;
  // an image stays a part: as a data-URL string it would reach the model as megabytes of text
  return { role: 'tool', tool_call_id: block.tool_use_id, content: parts.length === 0 ? '' : only?.type === 'text' ? only.text : parts };
}

function partsOf(block: TextBlockParam | ImageBlockParam | DocumentBlockParam, at: string): ChatContentPart[] {
  if (block.type === 'text') return [{ type: 'text', text: block.text }];
  if (block.type === 'image') return [imagePartOf(block)];
  const source = block.source;
  switch (source.type) {
    case 'base64':
      // OpenAI asks for a filename beside inline file data
      return [{ type: 'file', file: { filename: block.title || 'document.pdf', file_data: `data:${source.media_type};base64,${source.data}` } }];
    case 'text':
      return [{ type: 'text', text: source.data }];
    case 'content':
      if (typeof source.content === 'string') return [{ type: 'text', text: source.content }];
      return source.content.map((item) => (item.type === 'text' ? { type: 'text', text: item.text } : imagePartOf(item)));
    case 'url':
      throw invalidRequest(`${at}.source: a document by URL cannot be sent to this model's upstream; send it as base64`);
  }
}

function imagePartOf(block: ImageBlockParam): ChatContentPart {
  const source = block.source;
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

function assistantMessagesOf(blocks: ContentBlockParam[]): ChatMessage[] {
  // plain concatenation, as the model produced them; thinking has no signature-free chat form
  const text = blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  const calls: ChatToolCall[] = blocks.flatMap((block) =>
    block.type === 'tool_use'
      ? [{ id: block.id, type: 'function' as const, function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } }]
      : [],
  );
  if (calls.length > 0) return [{ role: 'assistant', content: text === '' ? null : text, tool_calls: calls }];
  // a turn that held only thinking leaves nothing an OpenAI model can read
  return text === '' ? [] : [{ role: 'assistant', content: text }];
}

/** Server tools (web search, …) run at Anthropic; a chat upstream has nothing to run them with. */
function isCustomTool(tool: Tool): tool is CustomTool {
  return (tool.type === undefined || tool.type === 'custom') && 'input_schema' in tool;
}

function chatToolOf(tool: CustomTool): ChatTool {
  const fn: ChatTool['function'] = { name: tool.name, parameters: tool.input_schema };
  if (tool.description !== undefined) fn.description = tool.description;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toolChoiceOf(choice: ToolChoice): ChatToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required'; // not "any": chat completions has no such value
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    case 'none':
      return 'none';
  }
}
