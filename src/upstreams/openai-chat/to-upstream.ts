// A pivot request as an OpenAI chat-completions request (chat-formats.md §3.1–3.4). Pure.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotTool, type PivotToolChoice, untranslatable } from '../../pivot/types.js';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolChoice } from './types.js';

/** OpenAI's effort levels for a thinking budget in tokens (the other way: anthropic/to-upstream.ts). */
export function effortOfBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens <= 2_048) return 'low';
  return budgetTokens <= 12_288 ? 'medium' : 'high';
}

export function chatRequestOf(request: PivotRequest): ChatRequest {
  // one system message, first: some OpenAI-compatible servers take no other
  const messages: ChatMessage[] = request.system.length > 0 ? [{ role: 'system', content: request.system.join('\n\n') }] : [];
  for (const message of request.messages) messages.push(...chatMessagesOf(message));
  const chat: ChatRequest = { model: request.model, messages };
  if (request.maxTokens !== undefined) chat.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.topP !== undefined) chat.top_p = request.topP;
  // OpenAI refuses a field it does not know; chat completions has no top_k
  if (request.topK !== undefined) throw untranslatable('top_k', "this model's upstream (chat completions) has no top_k");
  if (request.stop && request.stop.length > 0) chat.stop = request.stop;
  if (request.user !== undefined) chat.user = request.user;
  if (request.tools && request.tools.length > 0) {
    chat.tools = request.tools.map(chatToolOf);
    // tool_choice and parallel_tool_calls without tools are a 400 on OpenAI
    if (request.toolChoice !== undefined) chat.tool_choice = toolChoiceOf(request.toolChoice);
    if (request.parallelToolCalls !== undefined) chat.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.responseFormat?.type === 'json_object') chat.response_format = { type: 'json_object' };
  else if (request.responseFormat?.type === 'json_schema') {
    const { name, schema, strict } = request.responseFormat;
    chat.response_format = { type: 'json_schema', json_schema: { name, schema, ...(strict !== undefined && { strict }) } };
  }
  const effort = request.reasoning?.effort ?? (request.reasoning?.budgetTokens ? effortOfBudget(request.reasoning.budgetTokens) : undefined);
  if (effort !== undefined) chat.reasoning_effort = effort;
  chat.stream = request.stream;
  // without it an OpenAI stream carries no usage, and the bill would rest on the gateway's count
  if (request.stream) chat.stream_options = { include_usage: true };
  return chat;
}

function chatMessagesOf(message: PivotMessage): ChatMessage[] {
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: contentOf(message.content) }];
    case 'tool':
      // is_error has no chat field: the content says it
      return [{ role: 'tool', tool_call_id: message.toolCallId, content: contentOf(message.content) }];
    case 'assistant': {
      // reasoning has no input form in chat completions (and DeepSeek refuses it sent back)
      const text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      const calls = (message.toolCalls ?? []).map((call) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: call.name, arguments: call.arguments },
      }));
      if (calls.length > 0) return [{ role: 'assistant', content: text === '' ? null : text, tool_calls: calls }];
      return text === '' ? [] : [{ role: 'assistant', content: text }];
    }
  }
}

/** One text part as a plain string: the shape every OpenAI-compatible server accepts. */
function contentOf(parts: PivotPart[]): string | ChatContentPart[] {
  if (parts.length === 0) return '';
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === 'text') return only.text;
  return parts.map(chatPartOf);
}

function chatPartOf(part: PivotPart): ChatContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image': {
      const url = part.source.kind === 'base64' ? `data:${part.source.mediaType};base64,${part.source.data}` : part.source.url;
      return { type: 'image_url', image_url: { url } };
    }
    case 'file':
      // OpenAI asks for a filename beside inline file data
      return { type: 'file', file: { filename: part.name ?? 'document.pdf', file_data: `data:${part.mediaType};base64,${part.data}` } };
  }
}

function chatToolOf(tool: PivotTool): ChatTool {
  const fn: ChatTool['function'] = { name: tool.name, parameters: tool.parameters ?? { type: 'object', properties: {} } };
  if (tool.description !== undefined) fn.description = tool.description;
  if (tool.strict !== undefined) fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toolChoiceOf(choice: PivotToolChoice): ChatToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}
