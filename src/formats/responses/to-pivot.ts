// A responses-API request (chat-formats.md §4.1) read into the pivot, for an upstream that does not
// speak the responses API. Pure. What the pivot cannot carry is refused, naming the field.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotToolCall, untranslatable } from '../../pivot/types.js';
import { partOfDataUrl } from '../data-url.js';
import type { ResponsesInputItem, ResponsesRequest } from './types.js';

const UPSTREAM = "this model's upstream";

/**
 * Fields that change the answer and have no equivalent on a translated call: refused unless
 * absent, null or their default. Nothing is stored on a translated call, so what reads stored
 * state (`previous_response_id`, `conversation`, a stored `prompt`, `background` polling) cannot
 * be served either.
 *
 * Dropped as meaningless here, since the answer is the same without them: `store` (nothing is
 * kept, and the response says `store: false`), `metadata`, `service_tier`, `prompt_cache_key`,
 * `prompt_cache_retention`, `prompt_cache_options` (OpenAI's bookkeeping and cache hints),
 * `stream_options` (obfuscation padding, which the gateway never adds), `max_tool_calls` (counts
 * built-in tool calls, and built-in tools are refused) and `truncation` (an upstream refuses an
 * overflowing prompt rather than answer a different one: an error, never a changed answer).
 */
const REFUSED_UNLESS_DEFAULT: [field: string, isDefault: (value: unknown) => boolean][] = [
  ['previous_response_id', () => false],
  ['conversation', () => false],
  ['prompt', () => false],
  ['background', (value) => value === false],
  ['moderation', () => false],
  ['context_management', (value) => Array.isArray(value) && value.length === 0],
  ['top_logprobs', (value) => value === 0],
];

/** `include` asks for extra output; all but logprobs are either carried or about refused tools. */
const REFUSED_INCLUDES = new Set(['message.output_text.logprobs']);

const EFFORT: Record<string, NonNullable<PivotRequest['reasoning']>['effort']> = {
  // the pivot's scale ends at minimal and high; each upstream kind maps it onto its own scale
  none: 'minimal',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

export function pivotRequestOf(body: ResponsesRequest, { upstreamModel }: { upstreamModel: string }): PivotRequest {
  refuseUntranslatable(body);
  const request: PivotRequest = { model: upstreamModel, system: [], messages: [], stream: body.stream === true };
  if (typeof body.instructions === 'string' && body.instructions !== '') request.system.push(body.instructions);
  if (typeof body.input === 'string') request.messages.push({ role: 'user', content: [{ type: 'text', text: body.input }] });
  else if (Array.isArray(body.input)) readItems(body.input, request);
  if (typeof body.max_output_tokens === 'number') request.maxTokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  // safety_identifier is the newer name of the same end-user id
  const user = body.user ?? body.safety_identifier;
  if (typeof user === 'string') request.user = user;
  readTools(body, request);
  readTextFormat(body.text, request);
  readReasoning(body.reasoning, request);
  return request;
}

function refuseUntranslatable(body: ResponsesRequest): void {
  for (const [field, isDefault] of REFUSED_UNLESS_DEFAULT) {
    const value = body[field];
    if (value !== undefined && value !== null && !isDefault(value)) throw untranslatable(field, `not supported by ${UPSTREAM}`);
  }
  (Array.isArray(body.include) ? body.include : []).forEach((value, i) => {
    if (REFUSED_INCLUDES.has(value)) throw untranslatable(`include[${i}]`, `${JSON.stringify(value)} cannot be given by ${UPSTREAM}`);
  });
}

/**
 * Items in order. An assistant turn gathers what the API sends as separate items (reasoning, then
 * its message, then its function calls) until something else comes between.
 */
function readItems(items: ResponsesInputItem[], request: PivotRequest): void {
  const calls = new Map<string, string>();
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    switch (item.type ?? 'message') {
      case 'message':
        readMessage(item, at, request);
        return;
      case 'reasoning': {
        const reasoning = reasoningOf(item);
        if (!reasoning) return;
        const turn = openTurn(request, (last) => last.content.length === 0 && !last.toolCalls);
        turn.reasoning = [...(turn.reasoning ?? []), reasoning];
        return;
      }
      case 'function_call': {
        const call = toolCallOf(item, at);
        calls.set(call.id, call.name);
        const turn = openTurn(request, () => true);
        turn.toolCalls = [...(turn.toolCalls ?? []), call];
        return;
      }
      case 'function_call_output': {
        const id = String(item.call_id ?? '');
        const name = calls.get(id);
        // Gemini answers a call by its function's name: a result for no call cannot be placed
        if (name === undefined) throw untranslatable(`${at}.call_id`, `no earlier function_call item has the call_id ${JSON.stringify(id)}`);
        const output = item.output;
        const content = typeof output === 'string' ? [{ type: 'text' as const, text: output }] : partsOf(output, `${at}.output`);
        request.messages.push({ role: 'tool', toolCallId: id, name, content });
        return;
      }
      case 'item_reference':
        throw untranslatable(`${at}.type`, 'an item_reference names a stored item, and a translated call stores none: send the item itself');
      default:
        throw untranslatable(`${at}.type`, `${JSON.stringify(item.type)} items cannot be sent to ${UPSTREAM}`);
    }
  });
}

type AssistantMessage = Extract<PivotMessage, { role: 'assistant' }>;

/** The last message when it is an assistant turn that `fits`, else a new empty one. */
function openTurn(request: PivotRequest, fits: (last: AssistantMessage) => boolean): AssistantMessage {
  const last = request.messages.at(-1);
  if (last?.role === 'assistant' && fits(last)) return last;
  const turn: AssistantMessage = { role: 'assistant', content: [] };
  request.messages.push(turn);
  return turn;
}

function readMessage(item: ResponsesInputItem, at: string, request: PivotRequest): void {
  const content = partsOf(item.content, `${at}.content`);
  switch (item.role) {
    case 'user':
      request.messages.push({ role: 'user', content });
      return;
    case 'assistant': {
      // text after the turn's calls would change their order: a new turn
      const turn = openTurn(request, (last) => !last.toolCalls);
      turn.content.push(...content);
      return;
    }
    case 'system':
    case 'developer':
      request.system.push(
        content
          .map((part) => {
            if (part.type !== 'text') throw untranslatable(`${at}.content`, 'system and developer messages carry text only');
            return part.text;
          })
          .join('\n'),
      );
      return;
    default:
      throw untranslatable(`${at}.role`, `the role ${JSON.stringify(item.role)} cannot be sent to ${UPSTREAM}`);
  }
}

/** The raw reasoning text when the item has it, else its summary; `encrypted_content` is the provider's signature. */
function reasoningOf(item: ResponsesInputItem): { text: string; signature?: string } | undefined {
  const texts = (list: unknown) => (Array.isArray(list) ? list.map((part) => String((part as { text?: unknown }).text ?? '')) : []);
  const raw = texts(item.content);
  const text = (raw.length > 0 ? raw : texts(item.summary)).join('\n\n');
  const signature = typeof item.encrypted_content === 'string' && item.encrypted_content !== '' ? item.encrypted_content : undefined;
  if (text === '' && !signature) return undefined;
  return { text, ...(signature && { signature }) };
}

function toolCallOf(item: ResponsesInputItem, at: string): PivotToolCall {
  if (typeof item.name !== 'string') throw untranslatable(`${at}.name`, 'required');
  if (typeof item.call_id !== 'string') throw untranslatable(`${at}.call_id`, 'required');
  return { id: item.call_id, name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' };
}

/**
 * Content parts of any role. An image's `detail` is dropped, as on chat completions: no other
 * upstream takes it, and it changes the resolution the model sees, not what it is asked.
 */
function partsOf(content: unknown, at: string): PivotPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part: Record<string, unknown>, k): PivotPart => {
    const partAt = `${at}[${k}]`;
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: String(part.text ?? '') };
      // an assistant's earlier refusal is what it said
      case 'refusal':
        return { type: 'text', text: String(part.refusal ?? '') };
      case 'input_image': {
        if (typeof part.image_url !== 'string') throw untranslatable(`${partAt}.file_id`, `images by file_id cannot be sent to ${UPSTREAM}; send image_url`);
        const inline = partOfDataUrl(part.image_url);
        return { type: 'image', source: inline ? { kind: 'base64', ...inline } : { kind: 'url', url: part.image_url } };
      }
      case 'input_file': {
        if (typeof part.file_data !== 'string') {
          const field = typeof part.file_url === 'string' ? 'file_url' : 'file_id';
          throw untranslatable(`${partAt}.${field}`, `only inline file_data (a data: URL) can be sent to ${UPSTREAM}`);
        }
        const inline = partOfDataUrl(part.file_data);
        if (!inline) throw untranslatable(`${partAt}.file_data`, 'expected a data: URL (data:<media type>;base64,<data>)');
        return { type: 'file', ...inline, ...(typeof part.filename === 'string' && { name: part.filename }) };
      }
      default:
        throw untranslatable(`${partAt}.type`, `${JSON.stringify(part.type)} parts cannot be sent to ${UPSTREAM}`);
    }
  });
}

function readTools(body: ResponsesRequest, request: PivotRequest): void {
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    request.tools = body.tools.map((tool, i) => {
      // hosted tools (web_search, file_search, …) run at OpenAI: another upstream has nothing to run them with
      if (tool.type !== 'function') throw untranslatable(`tools[${i}].type`, `${JSON.stringify(tool.type)} tools run at OpenAI only`);
      if (typeof tool.name !== 'string') throw untranslatable(`tools[${i}].name`, 'required');
      // a deferred function is loaded by the hosted tool search, which is not there
      if (tool.defer_loading === true) throw untranslatable(`tools[${i}].defer_loading`, `not supported by ${UPSTREAM}`);
      return {
        name: tool.name,
        ...(typeof tool.description === 'string' && { description: tool.description }),
        ...(typeof tool.parameters === 'object' && tool.parameters !== null && { parameters: tool.parameters as Record<string, unknown> }),
        ...(typeof tool.strict === 'boolean' && { strict: tool.strict }),
      };
    });
  }
  const choice = body.tool_choice;
  if (choice === 'auto' || choice === 'none' || choice === 'required') request.toolChoice = choice;
  else if (typeof choice === 'object' && choice !== null) {
    const { type, name } = choice as { type?: unknown; name?: unknown };
    if (type !== 'function' || typeof name !== 'string') {
      throw untranslatable('tool_choice', `${JSON.stringify(type)} cannot be sent to ${UPSTREAM}; use "auto", "none", "required" or a function`);
    }
    request.toolChoice = { name };
  }
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
}

function readTextFormat(text: ResponsesRequest['text'], request: PivotRequest): void {
  if (!text) return;
  if (text.verbosity != null && text.verbosity !== 'medium') throw untranslatable('text.verbosity', `not supported by ${UPSTREAM}`);
  const format = text.format;
  if (!format || format.type === 'text') return;
  if (format.type === 'json_object') request.responseFormat = { type: 'json_object' };
  else if (format.type === 'json_schema') {
    request.responseFormat = {
      type: 'json_schema',
      name: typeof format.name === 'string' ? format.name : 'response',
      schema: format.schema ?? {},
      ...(typeof format.strict === 'boolean' && { strict: format.strict }),
    };
  } else throw untranslatable('text.format.type', `${JSON.stringify((format as { type?: unknown }).type)} cannot be sent to ${UPSTREAM}`);
}

/** `summary` needs nothing: reasoning is shown whenever the upstream gives it. */
function readReasoning(reasoning: ResponsesRequest['reasoning'], request: PivotRequest): void {
  if (!reasoning) return;
  if (reasoning.mode !== undefined && reasoning.mode !== 'standard') throw untranslatable('reasoning.mode', `not supported by ${UPSTREAM}`);
  // which earlier reasoning the model sees is each upstream's own rule on a translated call
  if (reasoning.context != null && reasoning.context !== 'auto') throw untranslatable('reasoning.context', `not supported by ${UPSTREAM}`);
  if (reasoning.effort == null) return;
  const effort = EFFORT[reasoning.effort];
  if (!effort) throw untranslatable('reasoning.effort', `${JSON.stringify(reasoning.effort)} is not a reasoning effort`);
  request.reasoning = { effort };
}
