// A chat-completions request read into the pivot, for an upstream that does not speak chat
// completions. Pure. What the pivot cannot carry is refused, naming the field.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotTool, type PivotToolCall, untranslatable } from '../../pivot/types.js';
import type { ChatRequest } from '../../upstreams/openai-chat/types.js';
import { partOfDataUrl } from '../data-url.js';

/**
 * Fields that change the answer and have no equivalent on a translated call: refused when set to
 * anything but their default. `store`, `metadata`, `service_tier` and `stream_options` are the
 * gateway's and OpenAI's bookkeeping, not the model's: on another upstream they mean nothing.
 */
const REFUSED_UNLESS_DEFAULT: [field: string, isDefault: (value: unknown) => boolean][] = [
  ['n', (value) => value === 1],
  ['logprobs', (value) => value === false],
  ['top_logprobs', (value) => value === 0],
  ['logit_bias', (value) => typeof value === 'object' && value !== null && Object.keys(value).length === 0],
  ['frequency_penalty', (value) => value === 0],
  ['presence_penalty', (value) => value === 0],
  ['seed', () => false],
  ['audio', () => false],
  ['prediction', () => false],
  ['web_search_options', () => false],
  ['functions', () => false],
  ['function_call', () => false],
  ['modalities', (value) => Array.isArray(value) && value.every((m) => m === 'text')],
];

export function pivotRequestOfChat(body: ChatRequest, { upstreamModel }: { upstreamModel: string }): PivotRequest {
  for (const [field, isDefault] of REFUSED_UNLESS_DEFAULT) {
    const value = body[field];
    if (value !== undefined && value !== null && !isDefault(value)) throw untranslatable(field, "not supported by this model's upstream");
  }
  const request: PivotRequest = { model: upstreamModel, system: [], messages: [], stream: body.stream === true };
  const calls = new Map<string, string>();
  body.messages.forEach((message, i) => readMessage(message as Record<string, unknown>, `messages[${i}]`, request, calls));
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') request.maxTokens = maxTokens;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  if (typeof body.stop === 'string') request.stop = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) request.stop = body.stop as string[];
  if (typeof body.user === 'string') request.user = body.user;
  readTools(body, request);
  readResponseFormat(body.response_format, request);
  const effort = body.reasoning_effort;
  if (effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high') request.reasoning = { effort };
  return request;
}

function readMessage(message: Record<string, unknown>, at: string, request: PivotRequest, calls: Map<string, string>): void {
  switch (message.role) {
    case 'system':
    case 'developer':
      request.system.push(textOf(message.content, `${at}.content`));
      return;
    case 'user':
      request.messages.push({ role: 'user', content: partsOf(message.content, `${at}.content`) });
      return;
    case 'assistant': {
      const toolCalls: PivotToolCall[] = [];
      for (const [j, call] of (Array.isArray(message.tool_calls) ? message.tool_calls : []).entries()) {
        const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function;
        const id = String((call as { id?: unknown }).id ?? '');
        if (typeof fn?.name !== 'string') throw untranslatable(`${at}.tool_calls[${j}].function.name`, 'required');
        calls.set(id, fn.name);
        toolCalls.push({ id, name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' });
      }
      const assistant: PivotMessage = { role: 'assistant', content: message.content == null ? [] : partsOf(message.content, `${at}.content`) };
      const reasoning = message.reasoning_content;
      if (typeof reasoning === 'string' && reasoning !== '') assistant.reasoning = [{ text: reasoning }];
      if (toolCalls.length > 0) assistant.toolCalls = toolCalls;
      request.messages.push(assistant);
      return;
    }
    case 'tool': {
      const id = String(message.tool_call_id ?? '');
      const name = calls.get(id);
      // Gemini answers a call by its function's name: a result for no call cannot be placed
      if (name === undefined) throw untranslatable(`${at}.tool_call_id`, `no earlier assistant tool call has the id ${JSON.stringify(id)}`);
      request.messages.push({ role: 'tool', toolCallId: id, name, content: partsOf(message.content, `${at}.content`) });
      return;
    }
    default:
      throw untranslatable(`${at}.role`, `the role ${JSON.stringify(message.role)} cannot be sent to this model's upstream`);
  }
}

function textOf(content: unknown, at: string): string {
  return partsOf(content, at)
    .map((part) => {
      if (part.type !== 'text') throw untranslatable(at, 'system instructions carry text only');
      return part.text;
    })
    .join('\n');
}

function partsOf(content: unknown, at: string): PivotPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part: Record<string, unknown>, k): PivotPart => {
    const partAt = `${at}[${k}]`;
    switch (part.type) {
      case 'text':
        return { type: 'text', text: String(part.text ?? '') };
      case 'image_url': {
        const url = String((part.image_url as { url?: unknown } | undefined)?.url ?? '');
        const inline = partOfDataUrl(url);
        return { type: 'image', source: inline ? { kind: 'base64', ...inline } : { kind: 'url', url } };
      }
      case 'file': {
        const file = (part.file ?? {}) as { file_data?: unknown; filename?: unknown };
        const inline = typeof file.file_data === 'string' ? partOfDataUrl(file.file_data) : undefined;
        if (!inline) throw untranslatable(`${partAt}.file`, "only inline file_data (a data: URL) can be sent to this model's upstream");
        return { type: 'file', ...inline, ...(typeof file.filename === 'string' && { name: file.filename }) };
      }
      default:
        throw untranslatable(`${partAt}.type`, `${JSON.stringify(part.type)} parts cannot be sent to this model's upstream`);
    }
  });
}

function readTools(body: ChatRequest, request: PivotRequest): void {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return;
  request.tools = body.tools.map((tool: Record<string, unknown>, i): PivotTool => {
    const fn = tool.function as { name?: unknown; description?: unknown; parameters?: unknown; strict?: unknown } | undefined;
    if (tool.type !== 'function' || typeof fn?.name !== 'string')
      throw untranslatable(`tools[${i}].type`, "only function tools can be sent to this model's upstream");
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' && { description: fn.description }),
      ...(fn.parameters !== undefined && { parameters: fn.parameters as Record<string, unknown> }),
      ...(typeof fn.strict === 'boolean' && { strict: fn.strict }),
    };
  });
  const choice = body.tool_choice as unknown;
  if (choice === 'auto' || choice === 'none' || choice === 'required') request.toolChoice = choice;
  else if (typeof choice === 'object' && choice !== null) {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    if (typeof name !== 'string') throw untranslatable('tool_choice', 'expected "auto", "none", "required" or a named function');
    request.toolChoice = { name };
  }
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
}

function readResponseFormat(format: unknown, request: PivotRequest): void {
  if (typeof format !== 'object' || format === null) return;
  const { type, json_schema: schema } = format as { type?: unknown; json_schema?: { name?: unknown; schema?: unknown; strict?: unknown } };
  if (type === 'json_object') request.responseFormat = { type: 'json_object' };
  else if (type === 'json_schema' && schema) {
    request.responseFormat = {
      type: 'json_schema',
      name: typeof schema.name === 'string' ? schema.name : 'response',
      schema: (schema.schema ?? {}) as Record<string, unknown>,
      ...(typeof schema.strict === 'boolean' && { strict: schema.strict }),
    };
  } else if (type !== 'text') throw untranslatable('response_format.type', `${JSON.stringify(type)} cannot be sent to this model's upstream`);
}
