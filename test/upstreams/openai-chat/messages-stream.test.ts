// A chat stream sent to a Messages caller through the pivot: ChatStreamDecoder's events written by
// MessagesStreamEncoder. A fixture's `upstream` is the stream as the gateway reads it: chunk objects
// (each framed as an SSE `data:` line), "[DONE]" (end), {"fail": message} (a broken upstream); without
// either it ends cleanly after the last chunk. Steps after the end are still fed, and must produce
// nothing. `usage` is the last usage the upstream reported before the end, as messages counts it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { MessagesStreamEncoder, messagesUsageOfPivot } from '../../../src/formats/messages/from-pivot.js';
import type { PivotEvent } from '../../../src/pivot/types.js';
import type { MessagesStreamEvent, MessagesUsage } from '../../../src/upstreams/anthropic/types.js';
import { ChatStreamDecoder } from '../../../src/upstreams/openai-chat/from-upstream.js';
import type { ChatCompletionChunk } from '../../../src/upstreams/openai-chat/types.js';
import { eventsOfSse } from '../../formats/messages/sse-events.js';

type Step = ChatCompletionChunk | '[DONE]' | { fail: string };

function run(steps: Step[]): { events: MessagesStreamEvent[]; usage: MessagesUsage | null } {
  const decoder = new ChatStreamDecoder();
  const encoder = new MessagesStreamEncoder({ id: 'msg_1', model: 'claude-sonnet-4-5', inputTokens: 20 });
  let sse = '';
  let usage: MessagesUsage | null = null;
  let ended = false;
  const write = (events: PivotEvent[]) => {
    for (const event of events) {
      // the stream tap reads nothing once the end is out (pipeline/translated-stream.ts)
      if (event.type === 'usage' && !ended) usage = messagesUsageOfPivot(event.usage);
      sse += encoder.push(event);
      ended ||= event.type === 'done';
    }
  };
  for (const step of steps) {
    if (typeof step === 'object' && 'fail' in step) {
      sse += encoder.fail(step.fail);
      ended = true;
    } else write(decoder.push(Buffer.from(`data: ${typeof step === 'string' ? step : JSON.stringify(step)}\n\n`)));
  }
  if (!ended) write([...decoder.end(), { type: 'done' }]);
  return { events: eventsOfSse(sse), usage };
}

async function translates(name: string) {
  const file = new URL(`./fixtures/${name}.json`, import.meta.url);
  const { upstream, expected } = JSON.parse(await readFile(file, 'utf8'));
  assert.deepEqual(run(upstream), expected);
}

test('plain text streams as one text block, closed by a message_delta carrying the usage chunk', () => translates('stream-plain-text'));

test("message_start shows the gateway's estimate of the prompt and message_delta the upstream's counts, which are billed", async () => {
  const file = new URL('./fixtures/stream-plain-text.json', import.meta.url);
  const { upstream } = JSON.parse(await readFile(file, 'utf8'));
  const { events } = run(upstream);
  const start = events.find((event) => event.type === 'message_start');
  const delta = events.find((event) => event.type === 'message_delta');
  assert.equal(start?.type === 'message_start' && start.message.usage.input_tokens, 20, 'the estimate the encoder was given');
  const reported = upstream.at(-2).usage;
  assert.deepEqual(delta?.type === 'message_delta' && delta.usage, { input_tokens: reported.prompt_tokens, output_tokens: reported.completion_tokens });
});

test('text then a tool call: the text block closes before the tool_use block opens, cached tokens reported apart', () =>
  translates('stream-text-then-tool-call'));

test('two parallel tool calls become two tool_use blocks, one after the other', () => translates('stream-text-then-parallel-tool-calls'));

test('a fragment carrying id, name and all arguments starts its block and delivers the arguments', () =>
  translates('stream-tool-call-arguments-in-first-fragment'));

test('content and finish in one chunk: the content is kept and the finish waits for usage', () => translates('stream-content-and-finish-in-one-chunk'));

test('reasoning streams as a thinking block, closed before the text block', () => translates('stream-reasoning-then-text'));

test('a stream ending without usage or finish ends the turn on the estimate and a token per generated delta', () => translates('stream-ended-without-usage'));

test('[DONE] before the usage chunk sends the held finish on the estimate, and nothing follows message_stop', () => translates('stream-done-before-usage'));

test('a failure mid-block ends with an error event and closes nothing', () => translates('stream-fails-mid-block'));

test('content after the finish is dropped', () => translates('stream-content-after-finish'));

test('an upstream that sends nothing still gets a whole, empty message', () => translates('stream-empty'));

test('a new id on tool call index 0 is a new block, and a tool turn finished with stop reports tool_use', () => translates('stream-calls-sharing-index-zero'));

test('a failure after finish and usage came ends the message whole instead of with an error', () => translates('stream-fails-after-usage'));
