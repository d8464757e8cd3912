// What the OpenAPI document says of every operation beside its schemas: a stable operationId, the
// x-request-id header every answer carries, and Retry-After on every 429; each checked against
// what a live gateway really sends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type DocumentedOperation, fetchDocument, operationsOf } from '../helpers/openapi.js';

describe('OpenAPI operations', () => {
  let gw: TestGateway;
  let operations: DocumentedOperation[];
  before(async () => {
    gw = await startTestGateway();
    operations = operationsOf(await fetchDocument(gw.url));
  });
  after(async () => {
    await gw.close();
  });

  test('every operation has an operationId in camelCase, unique in the document', () => {
    const ids = operations.map(({ key, operation }) => {
      assert.match(String(operation.operationId), /^[a-z][a-zA-Z0-9]*$/, key);
      return operation.operationId as string;
    });
    assert.equal(new Set(ids).size, ids.length, `repeated: ${ids.filter((id, i) => ids.indexOf(id) !== i)}`);
    const byKey = Object.fromEntries(operations.map(({ key, operation }) => [key, operation.operationId]));
    assert.equal(byKey['POST /v1/chat/completions'], 'createChatCompletion');
    assert.equal(byKey['GET /v1/account/usage'], 'getAccountUsage');
  });

  test('every response of every operation declares the x-request-id header, which real answers carry in its documented form', async () => {
    let declared: { description: string; schema: { pattern: string } } | undefined;
    for (const { key, operation } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        const header = response.headers?.['x-request-id'];
        assert.ok(header?.description, `${key} ${status} declares no x-request-id`);
        declared = header;
      }
    }
    const { key } = await gw.account();
    for (const [path, status] of [
      ['/v1/models', 200],
      ['/v1/models/no-such-model', 404],
    ] as const) {
      const res = await request(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      await res.body.dump();
      assert.equal(res.statusCode, status, path);
      assert.match(String(res.headers['x-request-id']), new RegExp(declared!.schema.pattern), path);
    }
  });

  test('every 429 an operation lists declares Retry-After, which a key past its requests per minute is sent', async () => {
    const limited = operations.filter(({ operation }) => operation.responses['429']);
    assert.ok(limited.length > 40, `${limited.length} operations list a 429`);
    for (const { key, operation } of limited) {
      assert.deepEqual(operation.responses['429'].headers['retry-after']?.schema, { type: 'integer', minimum: 1 }, key);
    }
    const { key } = await gw.account({ rpm: 1 });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await request(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      await res.body.dump();
      statuses.push(res.statusCode);
      if (res.statusCode === 429) assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/);
    }
    assert.deepEqual(statuses, [200, 429]);
  });
});
