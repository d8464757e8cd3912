// The request-body examples of the OpenAPI document, the values "Try it out" on /docs starts from:
// each is valid against its own schema, and each, sent as it stands to a gateway started with the
// built-in sandbox catalogue, is never refused as a bad request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { PNG_BYTES } from '../../src/sandbox/media.js';
import { ADMIN_TOKEN, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type DocumentedOperation, fetchDocument, operationsOf, schemaValidator } from '../helpers/openapi.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type Part, postUpload } from '../helpers/uploads.js';
import { makeWav } from '../helpers/wav.js';

describe('OpenAPI request-body examples', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  let doc: any;
  let withBody: DocumentedOperation[];
  before(async () => {
    gw = await startTestGateway();
    receiver = await startReceiver();
    doc = await fetchDocument(gw.url);
    withBody = operationsOf(doc).filter(({ operation }) => operation.requestBody);
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });
  const exampleOf = (key: string) => withBody.find((op) => op.key === key)?.operation.requestBody.content['application/json'].example;

  test('every request body has an example that is valid against its schema', () => {
    const check = schemaValidator(doc);
    assert.ok(withBody.length >= 25, `${withBody.length} operations with a body`);
    for (const { key, operation } of withBody) {
      for (const [type, media] of Object.entries<any>(operation.requestBody.content)) {
        assert.notEqual(media.example, undefined, `${key} ${type} has no example`);
        assert.equal(check(media.schema, media.example), undefined, `${key} ${type}`);
      }
    }
  });

  test('every example, sent as it stands with its parameters’ examples, is not answered 400', async () => {
    const owner = await gw.account();
    const made = await gw.call(owner.key, 'POST', '/v1/account/keys', { name: 'to rename' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    // Path ids are the caller's own objects, as a reader of the page would fill them in.
    const pathIds: Record<string, string> = { '/admin/accounts/{id}': owner.accountId, '/v1/account/keys/{id}': made.body.id };
    // The subtitle erase names a finished video of the account: the one its own example makes.
    const video = await gw.call(owner.key, 'POST', '/v1/videos/generations', exampleOf('POST /v1/videos/generations'));
    assert.equal(video.status, 200, JSON.stringify(video.body));
    await eventually(async () => (await gw.call(owner.key, 'GET', `/v1/videos/generations/${video.body.id}`)).body.status === 'succeeded');
    // A batch names an input file of the account: a JSONL of one chat line, uploaded for it.
    const batchFile = new FormData();
    batchFile.append('purpose', 'batch');
    const line = { custom_id: 'one', method: 'POST', url: '/v1/chat/completions', body: exampleOf('POST /v1/chat/completions') };
    batchFile.append('file', new Blob([`${JSON.stringify(line)}\n`]), 'in.jsonl');
    const uploaded = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${owner.key}` }, body: batchFile });
    assert.equal(uploaded.status, 201);
    const inputFileId = ((await uploaded.json()) as { id: string }).id;
    // And the test event goes to a receiver of this test, never to the example's outside host.
    const bodyIds: Record<string, object> = {
      'POST /v1/batches': { input_file_id: inputFileId },
      'POST /v1/videos/erase-subtitle': { video_task_id: video.body.id },
      'POST /v1/account/webhook-secret/test': { url: receiver.url },
    };
    const answers: string[] = [];
    for (const { key, path, method, operation } of withBody) {
      const url = new URL(
        path.replace(/^(.*?)\/\{id\}/, (whole, base) => `${base}/${pathIds[whole] ?? 'example'}`),
        gw.url,
      );
      const headers: Record<string, string> = {
        authorization: `Bearer ${path.startsWith('/admin/') ? ADMIN_TOKEN : owner.key}`,
      };
      for (const parameter of operation.parameters ?? []) {
        if (parameter.example === undefined) continue;
        if (parameter.in === 'query') url.searchParams.set(parameter.name, parameter.example);
        if (parameter.in === 'header') headers[parameter.name] = parameter.example;
      }
      const [type, media] = Object.entries<any>(operation.requestBody.content)[0]!;
      let status: number;
      let body: unknown;
      if (type === 'multipart/form-data') {
        // The example names the file; the page asks for one, as this sends one of that name.
        const parts: Part[] = Object.entries<string>(media.example).map(([name, value]) =>
          media.schema.properties[name]?.format === 'binary' ? wavFile(name, value) : { name, value },
        );
        ({ status, body } = await postUpload(String(url), parts, headers));
      } else {
        const res = await request(url, {
          method: method.toUpperCase() as 'POST',
          headers: { ...headers, 'content-type': type },
          body: JSON.stringify({ ...media.example, ...bodyIds[key] }),
        });
        status = res.statusCode;
        body = (await res.body.text()).slice(0, 500);
      }
      answers.push(`${key} → ${status}`);
      assert.notEqual(status, 400, `${key}: ${JSON.stringify(body)}`);
    }
    // The examples of metered calls work, not merely pass the checks.
    assert.equal(receiver.deliveries.length, 1, 'the test event arrived');
    for (const key of ['POST /v1/chat/completions', 'POST /v1/messages', 'POST /v1/search', 'POST /v1/images/async', 'POST /v1/audio/translations']) {
      assert.ok(answers.includes(`${key} → 200`), answers.join('\n'));
    }
  });
});

/** A second of WAV audio under the file name the example gives; a PNG for an image's name. */
function wavFile(name: string, filename: string): Part {
  if (filename.endsWith('.png')) return { name, filename, contentType: 'image/png', head: PNG_BYTES, bytes: PNG_BYTES.length };
  const wav = makeWav({ ms: 1_000 });
  return { name, filename, contentType: filename.endsWith('.wav') ? 'audio/wav' : 'text/plain', head: wav, bytes: wav.length };
}
