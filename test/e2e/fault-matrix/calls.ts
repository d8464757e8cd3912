// How the matrix calls: the sandbox's fault and request controls, a caller that waits for the
// whole answer, and a caller that leaves (while the upstream works, or after the first chunk).

import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, type FormData, request } from 'undici';
import type { TestGateway } from '../../helpers/gateway.js';

export type Send = (signal?: AbortSignal) => Promise<Dispatcher.ResponseData>;

export interface UpstreamRequest {
  kind: string | null;
  method: string;
  path: string;
  aborted: boolean;
}

/**
 * Polls `check` until it answers; `intervalMs` apart, since many cells wait at once on one event loop
 * (the gateways' own work shares it). Fails after `timeoutMs`.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  { timeoutMs, intervalMs = 100 }: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

export async function addFault(gw: TestGateway, rule: Record<string, unknown>): Promise<void> {
  const added = await gw.sandboxControl('POST', '/__sandbox/faults', rule);
  if (typeof added?.id !== 'string') throw new Error(`the sandbox refused the fault rule ${JSON.stringify(rule)}: ${JSON.stringify(added)}`);
}

/** What the sandbox received since the cell began, oldest first. */
export async function upstreamRequests(gw: TestGateway, kind?: string): Promise<UpstreamRequest[]> {
  const all = (await gw.sandboxControl('GET', '/__sandbox/requests')).data as UpstreamRequest[];
  return kind === undefined ? all : all.filter((entry) => entry.kind === kind);
}

export function postJson(gw: TestGateway, path: string, body: unknown, headers: Record<string, string> = {}): (key: string) => Send {
  return (key) => (signal) =>
    request(`${gw.url}${path}`, {
      method: 'POST',
      signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
}

export function postForm(gw: TestGateway, path: string, fields: () => FormData): (key: string) => Send {
  return (key) => (signal) => request(`${gw.url}${path}`, { method: 'POST', signal, headers: { authorization: `Bearer ${key}` }, body: fields() });
}

/** An answer read to its end; `cut` when the connection broke before the end (no error event to end it with). */
export interface WholeAnswer {
  status: number;
  contentType: string;
  text: string;
  bytes: number;
  cut: boolean;
}

export async function readWhole(res: Dispatcher.ResponseData): Promise<WholeAnswer> {
  const parts: Buffer[] = [];
  let cut = false;
  try {
    for await (const chunk of res.body) parts.push(chunk as Buffer);
  } catch {
    cut = true;
  }
  const all = Buffer.concat(parts);
  return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: all.toString('utf8'), bytes: all.length, cut };
}

/** The caller that waits: the whole answer. */
export async function callAndWait(send: Send): Promise<WholeAnswer> {
  return readWhole(await send());
}

/**
 * The caller that leaves while the upstream works: it sends, waits until the sandbox has the
 * request (the fault is programmed to come later), and goes. It must not have had an answer.
 */
export async function leaveWhileUpstreamWorks(gw: TestGateway, send: Send, upstream: { kind: string; path?: string }): Promise<void> {
  const controller = new AbortController();
  const outcome = send(controller.signal).then(
    async (res) => `answered ${res.statusCode}: ${(await readWhole(res)).text.slice(0, 200)}`,
    () => 'left',
  );
  // quick polls: the caller must be gone well before the fault (no store behind this control)
  const arrived = async () => (await upstreamRequests(gw, upstream.kind)).some((entry) => upstream.path === undefined || entry.path.startsWith(upstream.path));
  await waitFor(arrived, { timeoutMs: 5_000, intervalMs: 10 });
  controller.abort();
  const result = await outcome;
  if (result !== 'left') throw new Error(`the caller was to leave before the upstream answered, but was ${result}`);
}

/**
 * The caller that leaves a stream after its first chunk, or once it has read `minBytes` (past an
 * audio stream's header pages, say). Returns what it read.
 */
export async function leaveAfterFirstChunk(send: Send, { minBytes = 1 } = {}): Promise<{ status: number; first: string }> {
  const controller = new AbortController();
  const res = await send(controller.signal);
  if (res.statusCode !== 200) {
    const whole = await readWhole(res);
    throw new Error(`expected a 200 stream to leave, got ${res.statusCode}: ${whole.text.slice(0, 200)}`);
  }
  const iterator = res.body[Symbol.asyncIterator]();
  const read: Buffer[] = [];
  let bytes = 0;
  while (bytes < minBytes) {
    const next = await iterator.next();
    if (next.done) break;
    read.push(Buffer.from(next.value as Buffer));
    bytes += (next.value as Buffer).length;
  }
  res.body.on('error', () => {}); // the abort below errors the body: that is the point
  controller.abort();
  return { status: res.statusCode, first: Buffer.concat(read).toString('utf8') };
}

export interface StreamEvent {
  event: string | undefined;
  /** Parsed JSON, or the text as it came (`[DONE]`, a malformed chunk). */
  data: any;
}

/** Server-sent events as the caller reads them. */
export function sseEvents(text: string): StreamEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: ?(.*)$/m.exec(block)?.[1];
      const data = block
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.replace(/^data: ?/, ''))
        .join('\n');
      return { event, data: parseOrText(data) };
    });
}

/** JSON lines (the speech stream) as the caller reads them. */
export function lineEvents(text: string): StreamEvent[] {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => ({ event: undefined, data: parseOrText(line) }));
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function healthy(gw: TestGateway): Promise<void> {
  const res = await request(`${gw.url}/healthz`);
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET /healthz answered ${res.statusCode}: ${text}`);
}
