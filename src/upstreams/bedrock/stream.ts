// A ConverseStream body (application/vnd.amazon.eventstream) read into pivot events. Each binary frame
// is checked and parsed by Smithy's codec (both CRCs, the typed headers); the decoder only waits until a
// frame's bytes are all in, reading the total length its prelude starts with.
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { PivotEvent, PivotStreamDecoder } from '../../pivot/types.js';
import { finishOf, pivotUsageOf } from './from-upstream.js';
import type { ContentBlockDeltaEvent, ContentBlockStartEvent, MessageStopEvent, MetadataEvent, StreamException } from './types.js';

/** The prelude's first field: the frame's whole length, big-endian, itself included. */
const LENGTH_FIELD_BYTES = 4;
/** The event stream format's limit on one frame: a larger length is a broken stream, not a frame to wait for. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024 + 128 * 1024;

export class ConverseStreamDecoder implements PivotStreamDecoder {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  /** Bytes of a frame not yet whole. */
  private pending: Buffer = Buffer.alloc(0);
  /** The stream's block index → the pivot's call index, for toolUse blocks. */
  private readonly calls = new Map<number, number>();
  /** After the end (metadata) or an error nothing more is read. */
  private over = false;

  push(chunk: Buffer): PivotEvent[] {
    if (this.over) return [];
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const events: PivotEvent[] = [];
    while (!this.over && this.pending.length >= LENGTH_FIELD_BYTES) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) {
        this.fail(`an event stream frame claims ${length} bytes`, events);
        break;
      }
      if (this.pending.length < length) break;
      const frame = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      this.readFrame(frame, events);
    }
    return events;
  }

  /** A frame cut short by the body's end carries nothing: the missing `done` tells the stream broke. */
  end(): PivotEvent[] {
    return [];
  }

  private readFrame(frame: Buffer, events: PivotEvent[]): void {
    let message: Message;
    let payload: Record<string, unknown>;
    try {
      message = this.codec.decode(frame);
      payload = message.body.byteLength === 0 ? {} : JSON.parse(toUtf8(message.body));
    } catch (error) {
      // a frame that fails its checksum or its JSON leaves no trustworthy place to resume from
      return this.fail(`unreadable event stream frame: ${(error as Error).message}`, events);
    }
    const header = (name: string) => {
      const value = message.headers[name]?.value;
      return typeof value === 'string' ? value : undefined;
    };
    const messageType = header(':message-type');
    if (messageType === 'exception') {
      const text = (payload as StreamException).message;
      return this.fail(`${header(':exception-type') ?? 'exception'}: ${typeof text === 'string' ? text : 'no message'}`, events);
    }
    if (messageType === 'error') return this.fail(`${header(':error-code') ?? 'error'}: ${header(':error-message') ?? 'no message'}`, events);
    this.readEvent(header(':event-type'), payload, events);
  }

  private readEvent(type: string | undefined, payload: Record<string, unknown>, events: PivotEvent[]): void {
    switch (type) {
      case 'contentBlockStart': {
        const { contentBlockIndex, start } = payload as unknown as ContentBlockStartEvent;
        if (!start?.toolUse) break;
        const index = this.calls.size;
        this.calls.set(contentBlockIndex, index);
        events.push({ type: 'tool_call', index, id: start.toolUse.toolUseId, name: start.toolUse.name, arguments: '' });
        break;
      }
      case 'contentBlockDelta':
        this.readDelta(payload as unknown as ContentBlockDeltaEvent, events);
        break;
      case 'messageStop':
        events.push({ type: 'finish', finish: finishOf((payload as unknown as MessageStopEvent).stopReason) });
        break;
      case 'metadata': {
        const { usage } = payload as unknown as MetadataEvent;
        if (usage) events.push({ type: 'usage', usage: pivotUsageOf(usage) });
        // metadata comes after messageStop and is the stream's last event: the answer is whole
        events.push({ type: 'done' });
        this.over = true;
        break;
      }
      // messageStart and contentBlockStop carry nothing the pivot keeps
    }
  }

  private readDelta({ contentBlockIndex, delta }: ContentBlockDeltaEvent, events: PivotEvent[]): void {
    if (!delta) return;
    if (typeof delta.text === 'string') {
      if (delta.text !== '') events.push({ type: 'text', text: delta.text });
    } else if (delta.toolUse) {
      const index = this.calls.get(contentBlockIndex);
      if (index !== undefined && delta.toolUse.input !== '') events.push({ type: 'tool_call', index, arguments: delta.toolUse.input });
    } else if (delta.reasoningContent) {
      const { text, signature } = delta.reasoningContent;
      if (typeof text === 'string' && text !== '') events.push({ type: 'reasoning', text });
      if (typeof signature === 'string') events.push({ type: 'reasoning', text: '', signature });
    }
  }

  private fail(message: string, events: PivotEvent[]): void {
    events.push({ type: 'error', message });
    this.over = true;
    this.pending = Buffer.alloc(0);
  }
}
