// Round trip: a pivot request written by messagesRequestOf and read back by the messages format's
// pivotRequestOfMessages keeps its system, messages, tools and settings, for every request
// messages can express: conversations of user turns, assistant turns (signed thinking, text,
// calls whose arguments are JSON objects) and a result for each call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pivotRequestOfMessages } from '../../../src/formats/messages/to-pivot.js';
import type { PivotMessage, PivotPart, PivotRequest, PivotToolChoice } from '../../../src/pivot/types.js';
import { messagesRequestOf } from '../../../src/upstreams/anthropic/to-upstream.js';

const text = fc.string({ minLength: 1, maxLength: 12 });
const name = fc.constantFrom('get_weather', 'search', 'f');
// written as JSON.stringify writes an object, the form a messages tool_use input comes back in
const args = fc
  .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3, noNullPrototype: true })
  .map((input) => JSON.stringify(input));
const userPart: fc.Arbitrary<PivotPart> = fc.oneof(
  text.map((text) => ({ type: 'text' as const, text })),
  fc.webUrl().map((url) => ({ type: 'image' as const, source: { kind: 'url' as const, url } })),
  fc
    .base64String({ minLength: 4, maxLength: 12 })
    .map((data) => ({ type: 'image' as const, source: { kind: 'base64' as const, mediaType: 'image/png', data } })),
  fc.base64String({ minLength: 4, maxLength: 12 }).map((data) => ({ type: 'file' as const, mediaType: 'application/pdf', data, name: 'report.pdf' })),
);
const calls = fc.uniqueArray(fc.record({ id: fc.stringMatching(/^toolu_[A-Za-z0-9]{1,8}$/), name, arguments: args }, { noNullPrototype: true }), {
  maxLength: 2,
  selector: (call) => call.id,
});
/** One exchange: a user turn, then an assistant turn that says something, then a result per call. */
const exchange = fc
  .record(
    {
      question: fc.array(userPart, { minLength: 1, maxLength: 2 }),
      reasoning: fc.array(fc.record({ text, signature: text }, { noNullPrototype: true }), { maxLength: 1 }),
      reply: fc.array(text, { maxLength: 2 }),
      calls,
      results: fc.array(fc.tuple(text, fc.boolean()), { minLength: 2, maxLength: 2 }),
    },
    { noNullPrototype: true },
  )
  .map(({ question, reasoning, reply, calls, results }): PivotMessage[] => {
    const messages: PivotMessage[] = [{ role: 'user', content: question }];
    if (reasoning.length + reply.length + calls.length === 0) return messages;
    messages.push({
      role: 'assistant',
      content: reply.map((text) => ({ type: 'text', text })),
      ...(reasoning.length > 0 && { reasoning }),
      ...(calls.length > 0 && { toolCalls: calls }),
    });
    calls.forEach((call, i) => {
      const [output, isError] = results[i] as [string, boolean];
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: [{ type: 'text', text: output }], ...(isError && { isError }) });
    });
    return messages;
  });
const tools = fc.uniqueArray(
  fc.record(
    {
      name,
      description: fc.string({ maxLength: 8 }),
      parameters: fc.constant({ type: 'object', properties: { city: { type: 'string' } } }),
      strict: fc.boolean(),
    },
    { requiredKeys: ['name', 'parameters'], noNullPrototype: true },
  ),
  { maxLength: 2, selector: (tool) => tool.name },
);
const settings = fc.record(
  {
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    topK: fc.integer({ min: 1, max: 500 }),
    stop: fc.array(text, { minLength: 1, maxLength: 4 }),
    user: fc.string({ maxLength: 8 }),
    reasoning: fc.integer({ min: 1024, max: 8000 }).map((budgetTokens) => ({ budgetTokens })),
  },
  { requiredKeys: [], noNullPrototype: true },
);

/**
 * A choice messages can say: parallel calls can only be turned off, and not for `none`, and a
 * choice goes out only with tools.
 */
const choiceFor = (toolNames: string[]) =>
  fc.option(
    fc.record(
      {
        toolChoice: fc.constantFrom<PivotToolChoice>('auto', 'none', 'required', ...toolNames.map((name) => ({ name }))),
        parallelToolCalls: fc.constant(false),
      },
      { requiredKeys: ['toolChoice'], noNullPrototype: true },
    ),
    { nil: undefined },
  );

const request: fc.Arbitrary<PivotRequest> = fc
  .record(
    {
      system: fc.array(text, { maxLength: 2 }),
      messages: fc.array(exchange, { minLength: 1, maxLength: 3 }).map((exchanges) => exchanges.flat()),
      stream: fc.boolean(),
      maxTokens: fc.integer({ min: 8001, max: 64_000 }),
      tools,
      settings,
    },
    { noNullPrototype: true },
  )
  .chain(({ tools, settings, ...rest }) =>
    choiceFor(tools.map((tool) => tool.name)).map((choice) => {
      const parallel = choice?.toolChoice !== 'none' && choice?.parallelToolCalls === false ? { parallelToolCalls: false } : {};
      return {
        model: 'claude-sonnet-4-5',
        ...rest,
        ...settings,
        ...(tools.length > 0 && { tools, ...(choice && { toolChoice: choice.toolChoice, ...parallel }) }),
      };
    }),
  );

/** Consecutive user turns as messages sends them: one turn, as the roles must alternate. */
function merged(messages: PivotMessage[]): PivotMessage[] {
  const out: PivotMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (last?.role === 'user' && message.role === 'user') out[out.length - 1] = { role: 'user', content: [...last.content, ...message.content] };
    else out.push(message);
  }
  return out;
}

test('a request written for messages and read back as a messages request keeps its system, messages, tools and settings', () => {
  fc.assert(
    fc.property(request, (request) => {
      const { system, ...read } = pivotRequestOfMessages(messagesRequestOf(request), { upstreamModel: 'claude-sonnet-4-5' });
      // several system texts go out as one string, joined by a blank line
      const { system: sent, messages, ...rest } = request;
      assert.deepEqual([system.join('\n\n'), read], [sent.join('\n\n'), { ...rest, messages: merged(messages) }]);
    }),
    { numRuns: 300 },
  );
});
