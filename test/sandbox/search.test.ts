import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, loggedRequests, postTo } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const webUrl = () => `${sandbox.url}/search_api/web_search`;
const globalUrl = () => `${sandbox.url}/search_api/global_search`;

test('a web search answers Count deterministic results with the search context', async () => {
  const { status, headers, body } = await postTo(webUrl(), { Query: 'beijing travel', SearchType: 'web', Count: 2 }, AUTH);
  const id = body.ResponseMetadata.RequestId;
  assert.equal(status, 200);
  assert.equal(headers.get('x-tt-logid'), id);
  const slug = body.Result.WebResults[0].Id.split('-')[0];
  const result = (rank: number, day: string) => ({
    Id: `${slug}-${rank}`,
    SortId: rank,
    Title: `beijing travel: result ${rank}`,
    SiteName: `site${rank}.example.com`,
    Url: `https://site${rank}.example.com/${slug}/${rank}`,
    Snippet: `Snippet ${rank} about beijing travel.`,
    Summary: `Summary ${rank} about beijing travel, the part of the page most relevant to the query.`,
    Content: `Content ${rank} about beijing travel. The whole page, as the search index holds it.`,
    PublishTime: `${day}T10:00:00+08:00`,
    LogoUrl: `https://site${rank}.example.com/logo.png`,
    RankScore: rank === 1 ? 1 : 0.99,
    AuthInfoDes: '正常权威',
    AuthInfoLevel: 2,
    ContentFormats: 'text',
    RuyiInfo: null,
  });
  assert.deepEqual(body, {
    ResponseMetadata: { RequestId: id },
    Result: {
      ResultCount: 2,
      WebResults: [result(1, '2025-06-01'), result(2, '2025-05-31')],
      ImageResults: null,
      CardResults: null,
      SearchContext: { OriginQuery: 'beijing travel', SearchType: 'web' },
      TimeCost: 100,
      LogId: id,
    },
  });
  const again = await postTo(webUrl(), { Query: 'beijing travel', SearchType: 'web', Count: 2 }, AUTH);
  assert.deepEqual(again.body, body);
});

test('Count defaults to 10 and is capped at 50', async () => {
  const counts = [];
  for (const count of [undefined, 50, 80]) {
    const { body } = await postTo(webUrl(), { Query: 'q', SearchType: 'web', Count: count }, AUTH);
    counts.push([body.Result.ResultCount, body.Result.WebResults.length, body.Result.WebResults.at(-1).SortId]);
  }
  assert.deepEqual(counts, [
    [10, 10, 10],
    [50, 50, 50],
    [50, 50, 50],
  ]);
});

test('an image search, a missing query and a bad Count are refused with HTTP 200 and ResponseMetadata.Error', async () => {
  const answers = [];
  for (const body of [{ Query: 'cats', SearchType: 'image' }, { SearchType: 'web' }, { Query: 'q', SearchType: 'web', Count: 0 }]) {
    const res = await postTo(webUrl(), body, AUTH);
    answers.push([res.status, res.body.Result, res.body.ResponseMetadata.Error]);
  }
  assert.deepEqual(answers, [
    [200, null, { CodeN: 10402, Code: '10402', Message: 'InvalidSearchType: SearchType image is not enabled for this key' }],
    [200, null, { CodeN: 10400, Code: '10400', Message: 'query or search type is empty' }],
    [200, null, { CodeN: 10400, Code: '10400', Message: 'ParamError: Count: expected a positive integer' }],
  ]);
});

test('both search paths refuse a request without a bearer key with 401', async () => {
  const headers = { 'content-type': 'application/json' };
  const web = await postTo(webUrl(), { Query: 'q', SearchType: 'web' }, headers);
  const global = await postTo(globalUrl(), { Query: 'q' }, headers);
  for (const { status, body } of [web, global]) {
    assert.deepEqual([status, body.Result, body.ResponseMetadata.Error.CodeN], [401, null, 10401]);
  }
});

test('a global search answers TotalDocCount and Documents, with either casing of the fields', async () => {
  const pascal = await postTo(globalUrl(), { Query: 'tea', DocCount: 1, MaxSnippetLength: 10, MaxImageCountPerDoc: 1 }, AUTH);
  const snake = await postTo(globalUrl(), { query: 'tea', doc_count: 1, max_snippet_length: 10, max_image_count_per_doc: 1 }, AUTH);
  const slug = pascal.body.Result.Documents[0].Url.split('/')[3];
  assert.deepEqual(pascal.body.Result, {
    TotalDocCount: 1,
    Documents: [
      {
        Rank: 0,
        Url: `https://site1.example.com/${slug}/0`,
        Title: 'tea: document 1',
        Snippet: [
          { Type: 'text', Text: 'Document 1' },
          { Type: 'image', Image: { Width: 800, Height: 600, ImageUrl: `https://site1.example.com/${slug}/0/image-1.jpg` } },
        ],
        DocumentInfo: { ContentCharCount: 65, ContentTokenCount: 13, Filetype: 'html', PublishTime: '2025-06-01 10:00:00' },
        HostInfo: { Hostname: 'site1.example.com' },
      },
    ],
  });
  assert.deepEqual(snake.body.Result, pascal.body.Result);
  const defaults = await postTo(globalUrl(), { Query: 'tea', DocCount: 99 }, AUTH);
  assert.deepEqual([defaults.body.Result.TotalDocCount, defaults.body.Result.Documents.length], [20, 20]);
});

test('the requests log keeps each search body as received, under kind search', async () => {
  const web = { Query: 'q', SearchType: 'web', Count: 3, Filter: { NeedUrl: true } };
  const global = { query: 'q', doc_count: 2 };
  await postTo(webUrl(), web, AUTH);
  await postTo(globalUrl(), global, AUTH);
  const logged = (await loggedRequests(sandbox.url)).map((r) => [r.kind, r.path, r.body]);
  assert.deepEqual(logged, [
    ['search', '/search_api/web_search', web],
    ['search', '/search_api/global_search', global],
  ]);
});

test('a status fault on kind search answers in the ResponseMetadata.Error shape', async () => {
  await addFault(sandbox.url, { kind: 'search', status: 429 });
  const { status, body } = await postTo(webUrl(), { Query: 'q', SearchType: 'web' }, AUTH);
  assert.deepEqual(
    [status, body],
    [
      429,
      {
        ResponseMetadata: { RequestId: 'sandbox', Error: { CodeN: 700429, Code: '700429', Message: 'FreeRateLimitExceeded: sandbox fault: status 429' } },
        Result: null,
      },
    ],
  );
});
