// The traffic of a kill loop: a few workers, each with its own seeded choices, calling the
// gateway in a loop with long streams (chat, messages, speech), plain calls (chat, search, chat
// with Idempotency-Key, retried after a crash), and image and video tasks that call back. Each
// call is recorded under its own `x-request-id` (kept on its hold as client_request_id) and, when
// its answer arrived whole, with the amount the answer documents (its usage at the sandbox prices).
import { request } from 'undici';
import type { GatewayProcess } from './gateway-process.js';
import type { Random } from './prng.js';

export type CallKind = 'chat-stream' | 'messages-stream' | 'speech-stream' | 'chat' | 'chat-idempotent' | 'search' | 'image-task' | 'video-task';

const MIX: readonly (readonly [CallKind, number])[] = [
  ['chat-stream', 22],
  ['messages-stream', 14],
  ['speech-stream', 10],
  ['chat', 12],
  ['chat-idempotent', 10],
  ['search', 10],
  ['image-task', 10],
  ['video-task', 12],
];

// The sandbox catalogue's prices (src/config/sandbox-catalogue.ts), in micros.
const TOKEN_MICROS = { input: 2, output: 8 };
const CHARACTER_MICROS = 100;
const WEB_SEARCH_MICROS = 5_000;
const IMAGE_MICROS = 40_000;
const VIDEO_SECOND_MICROS = 100_000;

export interface CallRecord {
  requestId: string;
  kind: CallKind;
  /** `complete`: the whole answer arrived; `refused`: an error answer; `cut`: the connection broke, or a stream ended early. */
  outcome: 'complete' | 'refused' | 'cut';
  status?: number;
  /** What a complete answer documents it costs. */
  documentedMicros?: number;
  taskId?: string;
  idempotencyKey?: string;
  /** A complete answer that was replayed from an earlier attempt with the same key. */
  replayed?: boolean;
  error?: string;
}

export interface TrafficOptions {
  gateway: GatewayProcess;
  apiKey: string;
  callbackUrl: string;
  /** Prefix of every request id, so a run's holds are told apart. */
  tag: string;
}

type Answer = Omit<CallRecord, 'requestId' | 'kind' | 'idempotencyKey'>;
type Sent = { status: number; text: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const chatCharge = (input: number, output: number) => input * TOKEN_MICROS.input + output * TOKEN_MICROS.output;

/** The SSE `data:` payloads of a stream, with their event names. */
function sseEvents(text: string): { event?: string; data: string }[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim())
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1],
      data: block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    }));
}

function readChatStream({ status, text }: Sent): Answer {
  if (status !== 200) return { outcome: 'refused', status };
  const events = sseEvents(text);
  if (!events.some((e) => e.data === '[DONE]')) return { outcome: 'cut', status, error: 'no [DONE]' };
  const usage = events
    .map((e) => (e.data.startsWith('{') ? JSON.parse(e.data).usage : null))
    .filter(Boolean)
    .at(-1);
  return { outcome: 'complete', status, documentedMicros: usage ? chatCharge(usage.prompt_tokens, usage.completion_tokens) : undefined };
}

function readMessagesStream({ status, text }: Sent): Answer {
  if (status !== 200) return { outcome: 'refused', status };
  const events = sseEvents(text);
  if (!events.some((e) => e.event === 'message_stop')) return { outcome: 'cut', status, error: 'no message_stop' };
  const start = JSON.parse(events.find((e) => e.event === 'message_start')!.data).message.usage;
  const delta = JSON.parse(events.filter((e) => e.event === 'message_delta').at(-1)!.data).usage;
  return { outcome: 'complete', status, documentedMicros: chatCharge(delta.input_tokens ?? start.input_tokens, delta.output_tokens) };
}

function readSpeechStream({ status, text }: Sent): Answer {
  if (status !== 200) return { outcome: 'refused', status };
  const last = JSON.parse(text.trim().split('\n').at(-1) ?? '{}');
  if (last.code !== 20_000_000) return { outcome: 'cut', status, error: `last code ${last.code}` };
  return { outcome: 'complete', status, documentedMicros: last.usage.text_words * CHARACTER_MICROS };
}

function readJson(sent: Sent, documented: (body: any) => number | undefined): Answer & { body?: any } {
  if (sent.status !== 200) return { outcome: 'refused', status: sent.status };
  const body = JSON.parse(sent.text);
  return { outcome: 'complete', status: sent.status, documentedMicros: documented(body), body };
}

export interface Traffic {
  /** Workers finish the call in hand (an idempotent call: its retries too) and stop. */
  stop(): Promise<void>;
  readonly calls: CallRecord[];
  /** Answers (status lines) received so far: the loop kills a process only once it has served. */
  answers(): number;
}

export function startTraffic(options: TrafficOptions, randoms: Random[]): Traffic {
  const { gateway } = options;
  const calls: CallRecord[] = [];
  let stopping = false;
  let answers = 0;

  async function send(path: string, body: unknown, requestId: string, headers: Record<string, string> = {}): Promise<Sent & { replayed: boolean }> {
    const res = await request(`${gateway.base}${path}`, {
      method: 'POST',
      dispatcher: gateway.dispatcher,
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json', 'x-request-id': requestId, ...headers },
    });
    answers += 1;
    return { status: res.statusCode, text: await res.body.text(), replayed: res.headers['idempotent-replayed'] === 'true' };
  }

  /** One call, recorded whatever happens to it. */
  async function record(kind: CallKind, requestId: string, run: () => Promise<Answer>, idempotencyKey?: string): Promise<CallRecord> {
    let answer: Answer;
    try {
      answer = await run();
    } catch (error) {
      answer = { outcome: 'cut', error: (error as Error).message };
    }
    const call: CallRecord = { requestId, kind, ...answer, ...(idempotencyKey && { idempotencyKey }) };
    calls.push(call);
    return call;
  }

  function oneCall(kind: CallKind, id: string, random: Random): Promise<unknown> {
    const words = random.int(4, 24);
    const prompt = `kill loop ${id} [[words:${words}]]`;
    switch (kind) {
      case 'chat-stream':
        return record(kind, id, async () =>
          readChatStream(
            await send(
              '/v1/chat/completions',
              {
                model: 'sandbox-chat',
                stream: true,
                stream_options: { include_usage: true },
                max_tokens: words + 10,
                messages: [{ role: 'user', content: prompt }],
              },
              id,
            ),
          ),
        );
      case 'messages-stream':
        return record(kind, id, async () =>
          readMessagesStream(
            await send(
              '/v1/messages',
              {
                model: random.chance(0.5) ? 'sandbox-chat' : 'sandbox-claude',
                stream: true,
                max_tokens: words + 10,
                messages: [{ role: 'user', content: prompt }],
              },
              id,
              { 'anthropic-version': '2023-06-01' },
            ),
          ),
        );
      case 'speech-stream':
        return record(kind, id, async () =>
          readSpeechStream(
            await send(
              '/v1/audio/speech/unidirectional?model=sandbox-tts',
              {
                req_params: { text: Array.from({ length: random.int(2, 8) }, (_, i) => `Sentence ${i} of call ${id}.`).join(' '), speaker: 'kill-loop' },
              },
              id,
            ),
          ),
        );
      case 'chat':
        return record(kind, id, async () =>
          readJson(
            await send(
              '/v1/chat/completions',
              {
                model: 'sandbox-chat',
                max_tokens: words + 10,
                messages: [{ role: 'user', content: prompt }],
              },
              id,
            ),
            (body) => chatCharge(body.usage.prompt_tokens, body.usage.completion_tokens),
          ),
        );
      case 'chat-idempotent':
        return idempotentChat(id, prompt, words);
      case 'search':
        return record(kind, id, async () =>
          readJson(await send('/v1/search', { Type: 'web', Query: `toll roads ${id}`, Count: random.int(1, 10) }, id), () => WEB_SEARCH_MICROS),
        );
      case 'image-task': {
        const n = random.int(1, 2);
        return record(kind, id, async () => {
          const answer = readJson(
            await send('/v1/images/async', { model: 'sandbox-image', prompt: `a toll gate ${id}`, n, callback_url: options.callbackUrl }, id),
            () => n * IMAGE_MICROS,
          );
          return { ...answer, taskId: answer.body?.id, body: undefined };
        });
      }
      case 'video-task': {
        const duration = random.int(2, 6);
        return record(kind, id, async () => {
          const answer = readJson(
            await send(
              '/v1/videos/generations',
              {
                model: 'sandbox-video',
                content: [{ type: 'text', text: `a car passes ${id}` }],
                duration,
                callback_url: options.callbackUrl,
              },
              id,
            ),
            () => duration * VIDEO_SECOND_MICROS,
          );
          return { ...answer, taskId: answer.body?.id, body: undefined };
        });
      }
    }
  }

  /**
   * A plain call with Idempotency-Key, retried with the same key after a crash cut it (409 while
   * the dead instance's record waits for the sweep): it must be charged at most once in all.
   */
  async function idempotentChat(id: string, prompt: string, words: number) {
    const body = { model: 'sandbox-chat', max_tokens: words + 10, messages: [{ role: 'user', content: prompt }] };
    for (let attempt = 0; attempt < 12; attempt++) {
      await gateway.up();
      const call = await record(
        'chat-idempotent',
        `${id}-a${attempt}`,
        async () => {
          const sent = await send('/v1/chat/completions', body, `${id}-a${attempt}`, { 'idempotency-key': id });
          return {
            ...readJson(sent, (answer) => chatCharge(answer.usage.prompt_tokens, answer.usage.completion_tokens)),
            body: undefined,
            replayed: sent.replayed,
          };
        },
        id,
      );
      if (call.outcome === 'complete' || (call.status !== undefined && call.status !== 409 && call.status !== 503)) return;
      await sleep(300);
    }
  }

  async function work(worker: number, random: Random) {
    for (let n = 0; !stopping; n++) {
      await gateway.up();
      if (stopping) return;
      await oneCall(random.weighted(MIX), `${options.tag}-w${worker}-${n}`, random);
      await sleep(random.int(10, 80));
    }
  }

  const workers = randoms.map((random, worker) => work(worker, random));
  return {
    calls,
    answers: () => answers,
    async stop() {
      stopping = true;
      await Promise.all(workers);
    },
  };
}
