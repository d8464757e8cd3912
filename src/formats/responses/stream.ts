// A pivot stream written as the responses API's typed events (chat-formats.md §4.3): pure and
// synchronous, events in, SSE text out; ids and the clock are the caller's.
import type { PivotEvent, PivotFinish, PivotStreamEncoder, PivotUsage } from '../../pivot/types.js';
import { finishedResponse, itemId, itemStatusOf, type ResponseIds, reasoningItem, responseShell } from './from-pivot.js';
import type { ItemStatus, OutputItem, ResponseObject, ResponsesRequest, ResponsesStreamEvent } from './types.js';

type OpenItem =
  | { kind: 'message'; index: number; id: string; idJson: string; text: string }
  | { kind: 'reasoning'; index: number; id: string; text: string; signature?: string }
  | { kind: 'call'; index: number; id: string; call: number; callId: string; name: string; arguments: string };

/**
 * Output items strictly one after another, as OpenAI sends them: opening one closes the one
 * before with its `.done` events, so a client never sees a delta for an item it holds closed.
 * The terminal event waits for the pivot's `done`, by when the finish and the usage (in either
 * order) are in.
 */
export class ResponsesStreamEncoder implements PivotStreamEncoder {
  private readonly shell: ResponseObject;
  private sequence = 0;
  private started = false;
  private done = false;
  private readonly output: OutputItem[] = [];
  private open: OpenItem | undefined;
  private finish: PivotFinish | undefined;
  private usage: PivotUsage | undefined;

  constructor(
    private readonly ids: ResponseIds,
    private readonly body: ResponsesRequest,
  ) {
    this.shell = responseShell(ids, body);
  }

  push(event: PivotEvent): string {
    if (this.done) return '';
    let out = this.start();
    switch (event.type) {
      case 'text':
        if (event.text !== '') out += this.pushText(event.text);
        break;
      case 'reasoning':
        out += this.pushReasoning(event.text, event.signature);
        break;
      case 'tool_call':
        out += this.pushToolCall(event);
        break;
      case 'finish':
        this.finish = event.finish;
        out += this.closeOpen(itemStatusOf(event.finish));
        break;
      case 'usage':
        this.usage = event.usage;
        break;
      case 'done': {
        const finish = this.finish ?? 'stop';
        out += this.closeOpen(itemStatusOf(finish));
        const response = finishedResponse(this.shell, { output: this.output, finish, ...(this.usage && { usage: this.usage }) });
        out += this.write({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
        this.done = true;
        break;
      }
      case 'error':
        // the caller ends a broken stream with `fail`
        break;
    }
    return out;
  }

  /**
   * Nothing is closed: an item that looks done would pass a cut answer off as whole. The error
   * carries its fields at the top, as the SDK's type has them, and nested under `error` too, as
   * OpenAI's recorded streams send them (openai-node raises the nested form as an APIError).
   */
  fail(message: string): string {
    if (this.done) return '';
    this.done = true;
    const error = { type: 'error', code: 'server_error', message, param: null };
    return `event: error\ndata: ${JSON.stringify({ ...error, sequence_number: this.sequence++, error: { ...error, type: 'server_error' } })}\n\n`;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.write({ type: 'response.created', response: this.shell }) + this.write({ type: 'response.in_progress', response: this.shell });
  }

  /**
   * Most of a stream is text deltas: written from a template around the one string that varies,
   * the bytes JSON.stringify would give for the event, at a fraction of its cost per delta.
   */
  private pushText(text: string): string {
    let out = '';
    let open = this.open;
    if (open?.kind !== 'message') {
      out += this.closeOpen('completed');
      const index = this.output.length;
      const id = itemId(this.ids, 'msg', index);
      open = this.open = { kind: 'message', index, id, idJson: JSON.stringify(id), text: '' };
      out += this.write({
        type: 'response.output_item.added',
        output_index: index,
        item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
      });
      out += this.write({
        type: 'response.content_part.added',
        item_id: id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    }
    open.text += text;
    return `${out}event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${this.sequence++},"item_id":${open.idJson},"output_index":${open.index},"content_index":0,"delta":${JSON.stringify(text)},"logprobs":[]}\n\n`;
  }

  /** A signature ends its reasoning block (Anthropic sends it last): text after it is a new item. */
  private pushReasoning(text: string, signature: string | undefined): string {
    let out = '';
    let open = this.open;
    if (open?.kind !== 'reasoning' || (open.signature !== undefined && text !== '')) {
      out += this.closeOpen('completed');
      const index = this.output.length;
      const id = itemId(this.ids, 'rs', index);
      open = this.open = { kind: 'reasoning', index, id, text: '' };
      out += this.write({ type: 'response.output_item.added', output_index: index, item: { type: 'reasoning', id, summary: [] } });
    }
    if (text !== '') {
      const at = { item_id: open.id, output_index: open.index, summary_index: 0 };
      if (open.text === '') out += this.write({ type: 'response.reasoning_summary_part.added', ...at, part: { type: 'summary_text', text: '' } });
      open.text += text;
      out += this.write({ type: 'response.reasoning_summary_text.delta', ...at, delta: text });
    }
    if (signature) open.signature = (open.signature ?? '') + signature;
    return out;
  }

  /** A call's first fragment opens its item; a later fragment of a call already closed is lost to the format, so dropped. */
  private pushToolCall(event: Extract<PivotEvent, { type: 'tool_call' }>): string {
    let out = '';
    let open = this.open;
    if (open?.kind !== 'call' || open.call !== event.index) {
      if (event.id === undefined && event.name === undefined) return '';
      out += this.closeOpen('completed');
      const index = this.output.length;
      const id = itemId(this.ids, 'fc', index);
      const callId = event.id || `call_${this.ids.id.replace(/^resp_/, '')}_${event.index}`;
      open = this.open = { kind: 'call', index, id, call: event.index, callId, name: event.name ?? '', arguments: '' };
      const item = { type: 'function_call' as const, id, call_id: callId, name: open.name, arguments: '', status: 'in_progress' as const };
      out += this.write({ type: 'response.output_item.added', output_index: index, item });
    }
    if (event.arguments !== '') {
      open.arguments += event.arguments;
      out += this.write({ type: 'response.function_call_arguments.delta', item_id: open.id, output_index: open.index, delta: event.arguments });
    }
    return out;
  }

  private closeOpen(status: ItemStatus): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    let out = '';
    const at = { item_id: open.id, output_index: open.index };
    let item: OutputItem;
    if (open.kind === 'message') {
      const part = { type: 'output_text' as const, text: open.text, annotations: [] };
      out += this.write({ type: 'response.output_text.done', ...at, content_index: 0, text: open.text, logprobs: [] });
      out += this.write({ type: 'response.content_part.done', ...at, content_index: 0, part });
      item = { type: 'message', id: open.id, status, role: 'assistant', content: [part] };
    } else if (open.kind === 'reasoning') {
      if (open.text !== '') {
        out += this.write({ type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text: open.text });
        out += this.write({ type: 'response.reasoning_summary_part.done', ...at, summary_index: 0, part: { type: 'summary_text', text: open.text } });
      }
      item = reasoningItem(open.id, { text: open.text, ...(open.signature && { signature: open.signature }) }, this.body);
    } else {
      out += this.write({ type: 'response.function_call_arguments.done', ...at, name: open.name, arguments: open.arguments });
      item = { type: 'function_call', id: open.id, call_id: open.callId, name: open.name, arguments: open.arguments, status };
    }
    this.output.push(item);
    return out + this.write({ type: 'response.output_item.done', output_index: open.index, item });
  }

  private write(event: ResponsesStreamEvent): string {
    const { type, ...fields } = event;
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`;
  }
}
