// Every server the process builds shares one pool of request validators (http/server.ts): a second
// gateway in the process, as the tests start, compiles none of the route schemas again.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// The Ajv that Fastify's validator compiler loads, whose compile hands back each route's validator.
const requireFromCompiler = createRequire(createRequire(import.meta.url).resolve('@fastify/ajv-compiler'));
const Ajv = requireFromCompiler('ajv').default as { prototype: { compile(schema: object): unknown } };

/** The validators Ajv hands back while `run` runs. */
async function validatorsHandedOut(run: () => Promise<void>): Promise<unknown[]> {
  const handedOut: unknown[] = [];
  const compile = Ajv.prototype.compile;
  Ajv.prototype.compile = function (this: unknown, schema: object) {
    const validator = compile.call(this, schema);
    handedOut.push(validator);
    return validator;
  };
  try {
    await run();
  } finally {
    Ajv.prototype.compile = compile;
  }
  return handedOut;
}

const gateways: TestGateway[] = [];
after(() => Promise.all(gateways.map((gateway) => gateway.close())));

test('a second gateway in the process gets the validators the first compiled, no new one', async () => {
  const first = await validatorsHandedOut(async () => {
    gateways.push(await startTestGateway());
  });
  const second = await validatorsHandedOut(async () => {
    gateways.push(await startTestGateway());
  });

  assert.ok(first.length > 20, `the first gateway compiled its route schemas (${first.length})`);
  const compiledBefore = new Set(first);
  const fresh = second.filter((validator) => !compiledBefore.has(validator));
  assert.equal(fresh.length, 0, `validators compiled again: ${fresh.length} of ${second.length}`);
});

test('a second gateway still refuses a body its schema refuses', async () => {
  if (gateways.length < 2) gateways.push(await startTestGateway(), await startTestGateway());
  const { key } = await gateways[1]!.account({ creditMicros: 1_000_000 });
  const refused = await gateways[1]!.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: 'not a list' });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.deepEqual(refused.body, { error: 'messages: must be array', type: 'invalid_request_error' });
});
