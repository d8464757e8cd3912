// Long prompt texts are counted in a worker thread: the same count the tokenizer makes here, while
// the event loop goes on serving; a short prompt is still counted at once, with no promise.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { chatPromptTokens, promptTokensOffLoop } from '../../src/billing/estimates.js';
import { LONG_TEXT_CHARS } from '../../src/billing/prompt-tokens.js';
import { countLongText, stopTokenWorker } from '../../src/billing/token-worker.js';
import { countTokens, knownPromptTokens } from '../../src/billing/tokens.js';

const sandboxChat = { id: 'sandbox-chat', config: { tokenizer: 'o200k_base', image_input_tokens: 1_600, max_output_tokens: 4_096 } } as const;

/** Ordinary prose of about `chars` characters, different for each `seed` (so no count is remembered yet). */
function prose(chars: number, seed: number): string {
  const words = ['the', 'gateway', 'counts', 'every', 'token', 'of', 'a', 'prompt', 'before', 'it', 'holds', 'funds', `w${seed}`];
  const parts: string[] = [];
  for (let i = 0, length = 0; length < chars; i++) {
    const word = words[(i * 7 + seed) % words.length]!;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ');
}

/** Turns of the event loop (setImmediate callbacks run) until `work` settles. */
async function turnsWhile<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const value = await work;
  done = true;
  return { value, turns };
}

describe('long prompt texts counted off the event loop', () => {
  after(() => stopTokenWorker());

  test('a long text counts exactly what the tokenizer counts here, and is remembered', async () => {
    const text = prose(200_000, 1);
    assert.equal(await countLongText(text, 'o200k_base'), countTokens(text, 'o200k_base'));
    assert.equal(knownPromptTokens(text, 'o200k_base'), countTokens(text, 'o200k_base'));
  });

  test('the event loop keeps turning while a long text is counted', async () => {
    await countLongText(prose(40_000, 2), 'o200k_base'); // the worker started and its encoding loaded
    const { turns } = await turnsWhile(countLongText(prose(2_000_000, 3), 'o200k_base'));
    assert.ok(turns > 5, `the loop turned ${turns} times while two megabytes were counted`);
  });

  test('a count whose worker stops is made here instead, and the next long text starts another worker', async () => {
    const text = prose(1_000_000, 4);
    const counting = countLongText(text, 'o200k_base');
    await stopTokenWorker();
    assert.equal(await counting, countTokens(text, 'o200k_base'));
    const next = prose(100_000, 5);
    assert.equal(await countLongText(next, 'o200k_base'), countTokens(next, 'o200k_base'));
  });

  test('a prompt with a long message is estimated as a promise of the same total as counting it all here', async () => {
    const body = {
      messages: [
        { role: 'system', content: 'you are terse' },
        { role: 'user', content: prose(LONG_TEXT_CHARS * 3, 6) },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: prose(LONG_TEXT_CHARS, 7) } }],
    };
    const offLoop = promptTokensOffLoop(sandboxChat, (counting) => chatPromptTokens(body, sandboxChat, counting));
    assert.ok(offLoop instanceof Promise, 'long texts make the estimate wait for the worker');
    assert.equal(await offLoop, chatPromptTokens(body, sandboxChat));
  });

  test('a prompt of short texts is estimated at once, with no promise', () => {
    const body = { messages: [{ role: 'user', content: prose(LONG_TEXT_CHARS - 100, 8) }] };
    const offLoop = promptTokensOffLoop(sandboxChat, (counting) => chatPromptTokens(body, sandboxChat, counting));
    assert.equal(offLoop, chatPromptTokens(body, sandboxChat));
  });
});
