// Images answered at once (POST /v1/images/generations and /v1/images/edits) end to end, through
// the official SDK: URL and inline answers, the gateway's own URLs, the gallery, exact bills per
// size and quality, refusals with nothing held, refunds, test keys and Idempotency-Key replays.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { request } from 'undici';
import { PNG_BYTES } from '../../src/sandbox/media.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CREDIT = 1_000_000;
const PRICE = { standard: 40_000, hd: 80_000, wide: 80_000 };
const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

describe('images answered at once', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway((sandboxUrl) => ({ test_mode: { sandbox_url: sandboxUrl } }));
  });
  after(() => gw.close());
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const png = (name = 'gate.png') => toFile(PNG_BYTES, name, { type: 'image/png' });
  /** The ledger, newest first: each row's kind, what it moved of the balance and of the held funds. */
  const ledger = async (accountId: string) =>
    ((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as { kind: string; amount_micros: number; held_delta_micros: number }[]).map(
      (row) => [row.kind, row.amount_micros, row.held_delta_micros],
    );
  const galleryUrls = async (key: string) => ((await gw.call(key, 'GET', '/v1/assets?kind=image')).body.data as { url: string }[]).map((a) => a.url).sort();
  const fetchBytes = async (url: string) => {
    const res = await request(url);
    return { status: res.statusCode, type: res.headers['content-type'], bytes: Buffer.from(await res.body.arrayBuffer()) };
  };

  test('a generation answers the gateway’s own URLs, each serving the PNG, and the images join the gallery', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).images.generate({ model: 'sandbox-image', prompt: 'a toll gate at dawn', n: 2 });
    assert.equal(typeof answer.created, 'number');
    assert.equal(answer.data?.length, 2);
    const urls = answer.data!.map((image) => image.url as string);
    for (const url of urls) {
      assert.ok(url.startsWith(`${gw.url}/files/file_`), url);
      assert.deepEqual(await fetchBytes(url), { status: 200, type: 'image/png', bytes: PNG_BYTES });
    }
    assert.deepEqual(await galleryUrls(key), [...urls].sort());
  });

  test('a b64_json generation answers the image inline, and it still joins the gallery', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).images.generate({ model: 'sandbox-image', prompt: 'inline please', response_format: 'b64_json' });
    assert.deepEqual(
      answer.data?.map((image) => [image.b64_json, image.url]),
      [[PNG_BYTES.toString('base64'), undefined]],
    );
    const [url] = await galleryUrls(key);
    assert.deepEqual((await fetchBytes(url!)).bytes, PNG_BYTES);
  });

  test('1024x1024 standard is billed 40000 an image: n=2 holds and settles 80000', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await client(key).images.generate({ model: 'sandbox-image', prompt: 'two gates', n: 2, size: '1024x1024', quality: 'standard' });
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - 2 * PRICE.standard, held_micros: 0 });
    assert.deepEqual(await ledger(accountId), [
      ['settle', -2 * PRICE.standard, -2 * PRICE.standard],
      ['hold', 0, 2 * PRICE.standard],
      ['credit', CREDIT, 0],
    ]);
  });

  test('1024x1024 hd is billed 80000 an image, and 1792x1024 without a quality 80000', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await client(key).images.generate({ model: 'sandbox-image', prompt: 'sharp', size: '1024x1024', quality: 'hd' });
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - PRICE.hd);
    await client(key).images.generate({ model: 'sandbox-image', prompt: 'wide', size: '1792x1024' });
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - PRICE.hd - PRICE.wide);
  });

  test('settles on the images the upstream returned, not the n asked for', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const one = { created: 1_700_000_000, data: [{ b64_json: PNG_BYTES.toString('base64') }] };
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 200, body: one, times: 1 });
    const answer = await client(key).images.generate({ model: 'sandbox-image', prompt: 'three, please', n: 3 });
    assert.equal(answer.data?.length, 1);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - PRICE.standard);
  });

  test('an upstream answer whose image is not an image is a 502, refunded, and joins no gallery', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const bogus = { created: 1_700_000_000, data: [{ b64_json: Buffer.from('<html>not an image</html>').toString('base64') }] };
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 200, body: bogus, times: 1 });
    await assert.rejects(client(key).images.generate({ model: 'sandbox-image', prompt: 'bogus' }), (error: any) => error.status === 502);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
    assert.deepEqual(await galleryUrls(key), []);
  });

  test('a bad size is a 400 naming the field, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    const res = await gw.call(key, 'POST', '/v1/images/generations', { model: 'sandbox-image', prompt: 'odd', size: '999x999' });
    assert.equal(res.status, 400);
    assert.equal(res.body.type, 'invalid_request_error');
    assert.match(res.body.error, /^size: must be one of "auto", "256x256"/);
    assert.deepEqual(await ledger(accountId), [['credit', CREDIT, 0]]);
    assert.deepEqual(
      (await gw.sandboxControl('GET', '/__sandbox/requests')).data.filter((r: { kind: string }) => r.kind === 'images'),
      [],
    );
  });

  test('n above 10, an unknown quality and an unknown response_format are 400s naming the field', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const refused = async (extra: object) => (await gw.call(key, 'POST', '/v1/images/generations', { model: 'sandbox-image', prompt: 'x', ...extra })).body;
    assert.deepEqual(await refused({ n: 11 }), { error: 'n: must be <= 10', type: 'invalid_request_error' });
    assert.match((await refused({ quality: 'ultra' })).error, /^quality: must be one of "standard", "hd"/);
    assert.match((await refused({ response_format: 'gif' })).error, /^response_format: must be one of "url", "b64_json"/);
  });

  test('an upstream 500 is a 502 and the hold is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 500, times: 2 });
    await assert.rejects(client(key).images.generate({ model: 'sandbox-image', prompt: 'fails' }), (error: any) => error.status === 502);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
    assert.deepEqual(await ledger(accountId), [
      ['release', 0, -PRICE.standard],
      ['hold', 0, PRICE.standard],
      ['credit', CREDIT, 0],
    ]);
    assert.deepEqual(await galleryUrls(key), []);
  });

  test('an edit sends the image and mask upstream as multipart and answers a URL the gateway serves', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    const answer = await client(key).images.edit({ model: 'sandbox-image', image: await png(), mask: await png('mask.png'), prompt: 'add a rainbow' });
    const url = answer.data?.[0]?.url as string;
    assert.deepEqual(await fetchBytes(url), { status: 200, type: 'image/png', bytes: PNG_BYTES });
    assert.deepEqual(await galleryUrls(key), [url]);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - PRICE.standard);
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.filter((r: { kind: string }) => r.kind === 'image-edits');
    assert.match(sent.headers['content-type'], /^multipart\/form-data; boundary=/);
    assert.match(sent.body, /name="image"; filename="gate.png"/);
    assert.match(sent.body, /name="mask"; filename="mask.png"/);
  });

  test('an edit of several images (image[]) answers b64_json and is billed per image returned', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const images = [await png('a.png'), await toFile(JPEG_BYTES, 'b.jpg', { type: 'image/jpeg' })];
    const answer = await client(key).images.edit({ model: 'sandbox-image', image: images, prompt: 'merge', n: 2, response_format: 'b64_json' });
    assert.deepEqual(
      answer.data?.map((image) => image.b64_json),
      [PNG_BYTES.toString('base64'), PNG_BYTES.toString('base64')],
    );
    assert.equal((await galleryUrls(key)).length, 2);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - 2 * PRICE.standard);
  });

  test('an edit whose image is not a PNG, JPEG or WebP is a 400 naming the field, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await assert.rejects(
      client(key).images.edit({ model: 'sandbox-image', image: await toFile(Buffer.from('not an image'), 'fake.png', { type: 'image/png' }), prompt: 'x' }),
      (error: any) => error.status === 400 && /image: not an image; send a PNG, JPEG or WebP file/.test(error.message),
    );
    await assert.rejects(
      client(key).images.edit({ model: 'sandbox-image', image: await png(), mask: await toFile(JPEG_BYTES, 'm.jpg'), prompt: 'x' }),
      (error: any) => error.status === 400 && /mask: must be a PNG file/.test(error.message),
    );
    assert.deepEqual(await ledger(accountId), [['credit', CREDIT, 0]]);
  });

  test('an edit without an image is a 400 naming the field', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const form = new FormData();
    form.append('model', 'sandbox-image');
    form.append('prompt', 'nothing to edit');
    const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    assert.deepEqual([res.status, await res.json()], [400, { error: 'image field is required', type: 'invalid_request_error' }]);
  });

  test('an edit the upstream fails with a 500 is refunded', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'image-edits', status: 500, times: 2 });
    await assert.rejects(client(key).images.edit({ model: 'sandbox-image', image: await png(), prompt: 'fails' }), (error: any) => error.status === 502);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
  });

  test('a test key is served by the sandbox and billed on the test balance alone', async () => {
    const { accountId } = await gw.account({ creditMicros: CREDIT });
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, { name: 'ci' })).body.key as string;
    await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: CREDIT });
    const answer = await client(testKey).images.generate({ model: 'sandbox-image', prompt: 'test mode', quality: 'hd' });
    assert.equal(answer.data?.length, 1);
    const account = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual([account.balance_micros, account.test_balance_micros, account.test_held_micros], [CREDIT, CREDIT - PRICE.hd, 0]);
    assert.equal((await galleryUrls(testKey)).length, 1);
  });

  test('an Idempotency-Key replay answers the same images and charges once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const body = { model: 'sandbox-image', prompt: 'only once', n: 2 };
    const first = await gw.call(key, 'POST', '/v1/images/generations', body, { 'idempotency-key': 'gen-1' });
    const again = await gw.call(key, 'POST', '/v1/images/generations', body, { 'idempotency-key': 'gen-1' });
    assert.equal(first.status, 200);
    assert.deepEqual(again, first);
    const edit = () =>
      client(key).images.edit(
        { model: 'sandbox-image', image: [PNG_BYTES].map((b) => new File([b], 'e.png', { type: 'image/png' }))[0]!, prompt: 'edit once' },
        {
          headers: { 'idempotency-key': 'edit-1' },
        },
      );
    const edited = await edit();
    assert.deepEqual((await edit()).data, edited.data);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - 3 * PRICE.standard);
    assert.equal((await galleryUrls(key)).length, 3);
  });

  test('a per-token model is billed on the tokens it reports, the images sent to edit counted in', async () => {
    const tokens = await startTestGateway({
      models: {
        'image-tokens': {
          type: 'image',
          channel: 'sandbox-openai',
          upstream_model: 'sandbox-image-token',
          price: { input_token: 5_000_000, output_token: 10_000_000 },
        },
      },
    });
    try {
      const { accountId, key } = await tokens.account({ creditMicros: 100_000_000 });
      const sdk = new OpenAI({ apiKey: key, baseURL: `${tokens.url}/v1`, maxRetries: 0 });
      const answer = await sdk.images.edit({ model: 'image-tokens', image: [await png('a.png'), await png('b.png')], prompt: 'three word prompt' });
      const { input_tokens, output_tokens } = answer.usage!;
      assert.deepEqual([input_tokens, output_tokens], [3 + 2 * 65, 1056]);
      assert.equal((await tokens.settled(accountId)).balance_micros, 100_000_000 - (input_tokens * 5 + output_tokens * 10));
    } finally {
      await tokens.close();
    }
  });
});
