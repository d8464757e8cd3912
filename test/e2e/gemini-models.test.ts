// The model list as Google's SDK reads it: its default API version is v1, so GET /v1/models answers
// in the Gemini API's shape to a caller that sends its key header, and stays OpenAI's otherwise.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('the Gemini API model list', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    key = (await gw.account({ creditMicros: 1_000 })).key;
  });
  after(() => gw.close());

  for (const apiVersion of ['v1', 'v1beta']) {
    test(`models.list of @google/genai (${apiVersion}) gives every chat model and no other`, async () => {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, apiVersion } });
      const names: string[] = [];
      for await (const model of await ai.models.list()) names.push(model.name ?? '');
      const openAiList = await gw.call(key, 'GET', '/v1/models?type=chat');
      const chat = openAiList.body.data.map((model: { id: string }) => `models/${model.id}`);
      assert.deepEqual(names.sort(), chat.sort());
      assert.ok(names.includes('models/sandbox-gemini'));
    });

    test(`models.get of @google/genai (${apiVersion}) gives one model with its limits`, async () => {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, apiVersion } });
      const model = await ai.models.get({ model: 'sandbox-claude' });
      assert.equal(model.name, 'models/sandbox-claude');
      assert.equal(model.outputTokenLimit, 4096);
    });
  }

  test('GET /v1/models with a bearer key stays the OpenAI list', async () => {
    const answer = await gw.call(key, 'GET', '/v1/models');
    assert.equal(answer.body.object, 'list');
    assert.ok(answer.body.data.some((model: { id: string }) => model.id === 'sandbox-gemini'));
    assert.equal(answer.body.models, undefined);
  });

  test('the key may come as ?key= on the Gemini API routes only', async () => {
    const gemini = await fetch(`${gw.url}/v1beta/models?key=${key}`);
    assert.equal(gemini.status, 200);
    const openai = await fetch(`${gw.url}/v1/models?key=${key}`);
    assert.equal(openai.status, 401);
  });
});
