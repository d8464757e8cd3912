// A Messages request (chat-formats.md §1.2) read into the pivot, for an upstream that does not
// speak messages. Pure. What the pivot cannot carry is refused, naming the field.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotToolCall, untranslatable } from '../../pivot/types.js';
import type { ContentBlockParam, ImageBlockParam, MessagesRequest, Tool, ToolChoice } from '../../upstreams/anthropic/types.js';

/**
 * `service_tier`, `container` and `metadata` beyond `user_id` are Anthropic's bookkeeping: on
 * another upstream they mean nothing. `mcp_servers` would run tools the upstream cannot reach.
 */
const REFUSED = ['mcp_servers', 'context_management'];

export function pivotRequestOfMessages(body: MessagesRequest, { upstreamModel }: { upstreamModel: string }): PivotRequest {
  for (const field of REFUSED) if (body[field] !== undefined && body[field] !== null) throw untranslatable(field, "not supported by this model's upstream");
  const request: PivotRequest = { model: upstreamModel, system: [], messages: [], stream: body.stream === true, maxTokens: body.max_tokens };
  if (typeof body.system === 'string') {
    if (body.system !== '') request.system.push(body.system);
  } else if (Array.isArray(body.system)) request.system.push(...body.system.map((block) => block.text));
  const calls = new Map<string, string>();
  body.messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (typeof message.content === 'string') {
      const content: PivotPart[] = [{ type: 'text', text: message.content }];
      request.messages.push(message.role === 'user' ? { role: 'user', content } : { role: 'assistant', content });
    } else if (message.role === 'user') request.messages.push(...userMessagesOf(message.content, at, calls));
    else request.messages.push(assistantMessageOf(message.content, calls));
  });
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.topP = body.top_p;
  if (body.top_k !== undefined) request.topK = body.top_k;
  if (body.stop_sequences && body.stop_sequences.length > 0) request.stop = body.stop_sequences;
  if (typeof body.metadata?.user_id === 'string') request.user = body.metadata.user_id;
  readTools(body.tools, body.tool_choice, request);
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type === 'enabled' && typeof thinking.budget_tokens === 'number') request.reasoning = { budgetTokens: thinking.budget_tokens };
  return request;
}

/** Tool results become tool messages placed first: they answer the assistant turn just before. */
function userMessagesOf(blocks: ContentBlockParam[], at: string, calls: Map<string, string>): PivotMessage[] {
  const results: PivotMessage[] = [];
  const parts: PivotPart[] = [];
  blocks.forEach((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    if (block.type === 'tool_result') {
      const name = calls.get(block.tool_use_id);
      if (name === undefined) throw untranslatable(`${blockAt}.tool_use_id`, `no earlier tool_use block has the id ${JSON.stringify(block.tool_use_id)}`);
      const content =
        typeof block.content === 'string' || block.content === undefined
          ? [{ type: 'text' as const, text: block.content ?? '' }]
          : block.content.flatMap((item, k) => partsOf(item, `${blockAt}.content[${k}]`));
      results.push({ role: 'tool', toolCallId: block.tool_use_id, name, content, ...(block.is_error === true && { isError: true }) });
    } else parts.push(...partsOf(block, blockAt));
  });
  return parts.length === 0 ? results : [...results, { role: 'user', content: parts }];
}

function assistantMessageOf(blocks: ContentBlockParam[], calls: Map<string, string>): PivotMessage {
  const content: PivotPart[] = [];
  const toolCalls: PivotToolCall[] = [];
  const reasoning: { text: string; signature?: string }[] = [];
  for (const block of blocks) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') {
      calls.set(block.id, block.name);
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    } else if (block.type === 'thinking' && block.thinking !== '') {
      // an empty signature is the gateway's own mark on reasoning it translated: no provider's to send back
      reasoning.push({ text: block.thinking, ...(block.signature !== '' && { signature: block.signature }) });
    }
  }
  return { role: 'assistant', content, ...(reasoning.length > 0 && { reasoning }), ...(toolCalls.length > 0 && { toolCalls }) };
}

function partsOf(block: ContentBlockParam, at: string): PivotPart[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'image':
      return [imageOf(block)];
    case 'document': {
      const source = block.source;
      if (source.type === 'base64') return [{ type: 'file', mediaType: source.media_type, data: source.data, name: block.title || 'document.pdf' }];
      if (source.type === 'text') return [{ type: 'text', text: source.data }];
      if (source.type === 'content') {
        if (typeof source.content === 'string') return [{ type: 'text', text: source.content }];
        return source.content.map((item) => (item.type === 'text' ? { type: 'text', text: item.text } : imageOf(item)));
      }
      throw untranslatable(`${at}.source`, "a document by URL cannot be sent to this model's upstream; send it as base64");
    }
    default:
      throw untranslatable(`${at}.type`, `${JSON.stringify(block.type)} blocks cannot be sent to this model's upstream`);
  }
}

function imageOf(block: ImageBlockParam): PivotPart {
  const source = block.source;
  return {
    type: 'image',
    source: source.type === 'base64' ? { kind: 'base64', mediaType: source.media_type, data: source.data } : { kind: 'url', url: source.url },
  };
}

function readTools(tools: Tool[] | undefined, choice: ToolChoice | undefined, request: PivotRequest): void {
  if (!tools || tools.length === 0) return;
  request.tools = tools.map((tool, i) => {
    // Server tools (web search, …) run at Anthropic: another upstream has nothing to run them with.
    if ((tool.type !== undefined && tool.type !== 'custom') || !('input_schema' in tool)) {
      throw untranslatable(`tools[${i}].type`, `${JSON.stringify(tool.type)} tools run at Anthropic only`);
    }
    return {
      name: tool.name,
      parameters: tool.input_schema as Record<string, unknown>,
      ...(typeof tool.description === 'string' && { description: tool.description }),
      ...(typeof tool.strict === 'boolean' && { strict: tool.strict }),
    };
  });
  if (!choice) return;
  request.toolChoice = choice.type === 'any' ? 'required' : choice.type === 'tool' ? { name: choice.name } : choice.type;
  if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) request.parallelToolCalls = false;
}
