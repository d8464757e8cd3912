// PostgreSQL refuses the NUL character in text: a NUL in an id of the path, a query parameter or a
// JSON body is the caller's 400 naming the field, never the store's 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';

const baseUrl = await requirePostgresOrSkip('NUL characters on PostgreSQL');
const nextUrl = baseUrl ? freshSchemaUrls(baseUrl) : undefined;

describe('a NUL character on PostgreSQL', { skip: !baseUrl }, () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway({ store: nextUrl!() });
    ({ key } = await gw.account());
  });
  after(() => gw?.close());

  const refusal = (field: string) => ({ status: 400, type: 'invalid_request_error', names: true, field });
  const seen = (res: { status: number; body: { type: string; error: string } }, field: string) => ({
    status: res.status,
    type: res.body?.type,
    names: typeof res.body?.error === 'string' && res.body.error.includes(field),
    field,
  });

  test('in an id of the path is a 400 naming it', async () => {
    const res = await gw.call(key, 'GET', '/v1/videos/generations/task%00x');
    assert.deepEqual(seen(res, 'taskId'), refusal('taskId'));
  });

  test('in an id of an admin path is a 400 naming it', async () => {
    const res = await gw.admin('GET', '/admin/accounts/acc%00x');
    assert.deepEqual(seen(res, 'id'), refusal('id'));
  });

  test('in a query parameter is a 400 naming it', async () => {
    const res = await gw.call(key, 'GET', '/v1/account/usage?model=m%00x');
    assert.deepEqual(seen(res, 'model'), refusal('model'));
  });

  test('in a field of a JSON body is a 400 naming it', async () => {
    const res = await gw.call(ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'a\u0000b', credit_micros: 1 });
    assert.deepEqual(seen(res, 'name'), refusal('name'));
  });

  test('in a nested field of a JSON body is a 400 naming its path', async () => {
    const res = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'x', metadata: { tags: ['ok', 'n\u0000'] } });
    assert.deepEqual(seen(res, 'metadata.tags[1]'), refusal('metadata.tags[1]'));
  });

  test('in the filename of an upload is a 400 naming it', async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(Buffer.from('some text'))], { type: 'text/plain' }), 'notes\u0000.txt');
    const res = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    assert.deepEqual(seen({ status: res.status, body: (await res.json()) as any }, 'filename'), refusal('filename'));
  });

  test('an escaped backslash before u0000 is no NUL', async () => {
    const res = await gw.call(ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'a\\u0000b', credit_micros: 1 });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, 'a\\u0000b');
  });
});
