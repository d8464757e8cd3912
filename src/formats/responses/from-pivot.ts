// A pivot answer written as a responses-API response object (chat-formats.md §4.2), for a
// responses caller whose model is on another kind of upstream. Pure: ids come from the caller.
import type { PivotFinish, PivotResponse, PivotUsage } from '../../pivot/types.js';
import type { FunctionCallItem, ItemStatus, OutputItem, ReasoningItem, ResponseObject, ResponsesRequest, ResponsesUsage } from './types.js';

export interface ResponseIds {
  /** `resp_…`, the gateway's own. */
  id: string;
  /** The model id the caller named. */
  model: string;
  /** Unix seconds. */
  createdAt: number;
}

/** An output item's id, made from the response's and the item's place, so the answer and its stream agree. */
export function itemId(ids: ResponseIds, prefix: 'msg' | 'fc' | 'rs', outputIndex: number): string {
  return `${prefix}_${ids.id.replace(/^resp_/, '')}_${outputIndex}`;
}

/** `length` and a content filter leave the response incomplete, as OpenAI's own; any other finish completes it. */
export function incompleteReasonOf(finish: PivotFinish): 'max_output_tokens' | 'content_filter' | undefined {
  if (finish === 'length') return 'max_output_tokens';
  if (finish === 'refusal') return 'content_filter';
  return undefined;
}

export function responsesUsageOf(usage: PivotUsage): ResponsesUsage {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cacheRead ?? 0, cache_write_tokens: usage.cacheWrite ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: usage.input + usage.output,
  };
}

/**
 * The response object around an output, with the request's settings echoed as the API echoes
 * them (its defaults where the request left them out). `store` is false whatever was asked:
 * nothing of a translated call is kept.
 */
export function responseShell(ids: ResponseIds, body: ResponsesRequest): ResponseObject {
  const text = body.text ?? {};
  return {
    id: ids.id,
    object: 'response',
    created_at: ids.createdAt,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: typeof body.max_tool_calls === 'number' ? body.max_tool_calls : null,
    model: ids.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: 'default',
    store: false,
    temperature: body.temperature ?? 1,
    text: { format: text.format ?? { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((tool) => ({
      ...tool,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    })),
    top_logprobs: typeof body.top_logprobs === 'number' ? body.top_logprobs : 0,
    top_p: body.top_p ?? 1,
    truncation: typeof body.truncation === 'string' ? body.truncation : 'disabled',
    usage: null,
    user: body.user ?? null,
    metadata: (body.metadata as Record<string, string> | undefined) ?? {},
  };
}

/** The shell finished: its output, status and usage (null when the upstream reported none: never a made-up zero). */
export function finishedResponse(shell: ResponseObject, args: { output: OutputItem[]; finish: PivotFinish; usage?: PivotUsage }): ResponseObject {
  const reason = incompleteReasonOf(args.finish);
  return {
    ...shell,
    status: reason ? 'incomplete' : 'completed',
    incomplete_details: reason ? { reason } : null,
    output: args.output,
    usage: args.usage ? responsesUsageOf(args.usage) : null,
  };
}

/** `encrypted_content` carries the provider's signature, only when the caller asked for it (as OpenAI does). */
export function reasoningItem(id: string, reasoning: { text: string; signature?: string }, body: ResponsesRequest): ReasoningItem {
  const item: ReasoningItem = { type: 'reasoning', id, summary: reasoning.text === '' ? [] : [{ type: 'summary_text', text: reasoning.text }] };
  if (reasoning.signature && body.include?.includes('reasoning.encrypted_content')) item.encrypted_content = reasoning.signature;
  return item;
}

/**
 * Reasoning items first (translated reasoning shown as the summary, the part every responses client
 * displays), then the message, then one item per function call. The last item is `incomplete`
 * when the answer is: that is the one the cut fell in.
 */
export function responseOf(answer: PivotResponse, ids: ResponseIds, body: ResponsesRequest): ResponseObject {
  const output: OutputItem[] = [];
  for (const reasoning of answer.reasoning ?? []) output.push(reasoningItem(itemId(ids, 'rs', output.length), reasoning, body));
  if (answer.text !== '') {
    const content = [{ type: 'output_text' as const, text: answer.text, annotations: [] }];
    output.push({ type: 'message', id: itemId(ids, 'msg', output.length), status: 'completed', role: 'assistant', content });
  }
  for (const call of answer.toolCalls) {
    const item: FunctionCallItem = {
      type: 'function_call',
      id: itemId(ids, 'fc', output.length),
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    };
    output.push(item);
  }
  const last = output.at(-1);
  if (last && last.type !== 'reasoning') last.status = itemStatusOf(answer.finish);
  return finishedResponse(responseShell(ids, body), { output, finish: answer.finish, ...(answer.usage && { usage: answer.usage }) });
}

export const itemStatusOf = (finish: PivotFinish): ItemStatus => (incompleteReasonOf(finish) ? 'incomplete' : 'completed');
