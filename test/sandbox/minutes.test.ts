import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { addFault, clearSandbox, loggedRequests, postJson } from './sandbox-client.js';

const TASK_MS = 600;
let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0, taskMs: TASK_MS });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const LARK = { 'x-api-key': 'k', 'x-api-resource-id': 'volc.lark.minutes', 'content-type': 'application/json' };
const ASR = { 'x-api-app-key': 'app', 'x-api-access-key': 'token', 'x-api-resource-id': 'volc.seedasr.auc', 'content-type': 'application/json' };

async function call(path: string, body: unknown, headers: Record<string, string>) {
  const res = await postJson(`${sandbox.url}${path}`, body, headers);
  const text = await res.text();
  return { status: res.status, code: res.headers.get('x-api-status-code'), body: text === '' ? undefined : (JSON.parse(text) as any) };
}

/** Polls `query` until its X-Api-Status-Code is no longer queued/processing; answers each code seen, in order. */
async function codesUntilDone(query: () => ReturnType<typeof call>): Promise<{ codes: string[]; last: Awaited<ReturnType<typeof call>> }> {
  const deadline = Date.now() + 5000;
  const codes: string[] = [];
  for (;;) {
    const answer = await query();
    if (codes.at(-1) !== answer.code) codes.push(answer.code as string);
    if (answer.code !== '20000001' && answer.code !== '20000002') return { codes, last: answer };
    if (Date.now() > deadline) throw new Error(`still ${answer.code} after 5000 ms`);
    await delay(5); // a poll interval, not a wait for the result
  }
}

const larkSubmit = (fileUrl: string, params: object = {}) =>
  call('/api/v3/auc/lark/submit', { Input: { Offline: { FileURL: fileUrl, FileType: 'audio' } }, Params: params }, LARK);

async function larkDone(fileUrl: string, params: object = {}) {
  const submitted = await larkSubmit(fileUrl, params);
  assert.deepEqual([submitted.status, submitted.code], [200, '20000000']);
  const id = submitted.body.Data.TaskID;
  return { id, ...(await codesUntilDone(() => call('/api/v3/auc/lark/query', { TaskID: id }, LARK))) };
}

const fetchJson = async (url: string) => {
  const res = await fetch(url);
  assert.equal(res.headers.get('content-type'), 'application/json');
  return res.json() as Promise<any>;
};

test('lark: queued, then running, then success with every result file when AllActivate is on', async () => {
  const { id, codes, last } = await larkDone('https://files.example/meeting.mp3?duration_s=25', {
    AllActivate: true,
    TranslationParams: { TargetLang: 'ja_jp' },
  });
  assert.deepEqual(codes, ['20000002', '20000001', '20000000']);
  const media = (name: string) => `${sandbox.url}/__media/minutes-${id}-${name}.json`;
  assert.deepEqual(last.body, {
    Code: 0,
    Message: '',
    Data: {
      TaskID: id,
      ErrCode: 0,
      ErrMessage: '',
      Status: 'success',
      Result: {
        AudioTranscriptionFile: media('transcription'),
        ChapterFile: media('chapters'),
        InformationExtractionFile: media('information-extraction'),
        SummarizationFile: media('summary'),
        TranslationFile: media('translation'),
      },
      Duration: 25,
    },
  });
});

test('lark: the result files hold one sentence per 10 s, speakers taking turns', async () => {
  const { last } = await larkDone('https://files.example/m.mp3?duration_s=25', { AllActivate: true, SourceLang: 'en_us' });
  const files = last.body.Data.Result;
  const speaker = (id: number) => ({ id, name: `说话人${id}`, type: 0 });
  const spans = [
    [0, 8333, 1],
    [8333, 16666, 2],
    [16666, 25000, 1],
  ] as const;
  const said = spans.map(([start_time, end_time, who], i) => ({
    sentence_id: String(i + 1),
    paragraph_id: '1',
    content: `Sandbox sentence ${i + 1}.`,
    start_time,
    end_time,
    speaker: speaker(who),
  }));
  assert.deepEqual(
    await fetchJson(files.AudioTranscriptionFile),
    said.map(({ content, start_time, end_time, speaker, ...ids }) => ({ ...ids, lang: 'en_us', content, start_time, end_time, speaker })),
  );
  assert.deepEqual(await fetchJson(files.ChapterFile), {
    chapter_summary: [{ start_time: 0, end_time: 25000, title: 'Chapter 1', summary: 'Sentences 1 to 3.' }],
  });
  const todo = { content: 'Follow up on: Sandbox sentence 1.', executor: ['说话人1'], execution_ddl: '' };
  assert.deepEqual(await fetchJson(files.InformationExtractionFile), {
    todo_list: [{ ...todo, execution_time: [], sentence_id: ['1'], start_time: 0, todo_idx: 0, polished_res: todo }],
    question_answer: [{ question: 'What was said first?', answer: 'Sandbox sentence 1.', question_time: '0', question_type: 'fact', sentence_id: '1' }],
  });
  assert.deepEqual(await fetchJson(files.SummarizationFile), { title: 'Sandbox meeting', paragraph: '3 sentences from 2 speakers over 25 s.' });
  const translated = await fetchJson(files.TranslationFile);
  assert.deepEqual(translated[2], {
    sentence_id: '3',
    paragraph_id: '1',
    source_lang: 'en_us',
    target_lang: 'en_us',
    content: 'Sandbox sentence 3.',
    translation_content: '[en_us] Sandbox sentence 3.',
    start_time: 16666,
    end_time: 25000,
    speaker: speaker(1),
  });
});

test('lark: only the features asked for get a file, and the audio is 60 s without duration_s', async () => {
  const plain = await larkDone('https://files.example/m.mp3');
  const some = await larkDone('https://files.example/m.mp3?duration_s=7', {
    SummarizationEnabled: true,
    InformationExtractionEnabled: true,
    InformationExtractionParams: { Types: ['todo_list'] },
  });
  assert.deepEqual(Object.keys(plain.last.body.Data.Result), ['AudioTranscriptionFile']);
  assert.equal(plain.last.body.Data.Duration, 60);
  assert.equal((await fetchJson(plain.last.body.Data.Result.AudioTranscriptionFile)).length, 6);
  assert.deepEqual(Object.keys(some.last.body.Data.Result), ['AudioTranscriptionFile', 'InformationExtractionFile', 'SummarizationFile']);
  assert.deepEqual(Object.keys(await fetchJson(some.last.body.Data.Result.InformationExtractionFile)), ['todo_list']);
  assert.equal(some.last.body.Data.Duration, 7);
});

test('lark: a task_outcome fault fails the task with ErrCode 4811', async () => {
  await addFault(sandbox.url, { kind: 'minutes', task_outcome: 'failed', times: 1 });
  const failed = await larkDone('https://files.example/m.mp3');
  assert.deepEqual(failed.last.body.Data, {
    TaskID: failed.id,
    ErrCode: 4811,
    ErrMessage: 'audio download error (sandbox fault: task_outcome failed)',
    Status: 'failed',
  });
  assert.equal((await larkDone('https://files.example/m.mp3')).last.body.Data.Status, 'success');
});

test('lark: missing credentials, a wrong resource, a missing FileURL and an unknown TaskID are refused', async () => {
  const { 'x-api-key': _, ...noKey } = LARK;
  const unauthorized = await call('/api/v3/auc/lark/submit', {}, noKey);
  const wrongResource = await call('/api/v3/auc/lark/submit', {}, { ...LARK, 'x-api-resource-id': 'volc.seedasr.auc' });
  const noFile = await call('/api/v3/auc/lark/submit', { Input: {} }, LARK);
  const badDuration = await larkSubmit('https://files.example/m.mp3?duration_s=abc');
  const unknown = await call('/api/v3/auc/lark/query', { TaskID: 'nope' }, LARK);
  assert.deepEqual(
    [unauthorized, wrongResource, noFile, badDuration, unknown].map((a) => [a.status, a.code, a.body.Code]),
    [
      [401, '45000010', 45000010],
      [403, '45000030', 45000030],
      [400, '45000001', 45000001],
      [400, '45000001', 45000001],
      [400, '45000001', 45000001],
    ],
  );
  assert.equal(noFile.body.Message, 'Input.Offline.FileURL: required');
  assert.equal(badDuration.body.Message, 'Input.Offline.FileURL: duration_s=abc: expected a positive number');
});

const asrSubmit = (id: string, body: object) => call('/api/v3/auc/bigmodel/submit', body, { ...ASR, 'x-api-request-id': id });
const asrQuery = (id: string) => call('/api/v3/auc/bigmodel/query', {}, { ...ASR, 'x-api-request-id': id });

/** An utterance's three words, its time shared out evenly (ms). */
const words = (start: number, end: number, last: string) =>
  ['Sandbox', 'sentence', last].map((text, i) => ({
    text,
    start_time: Math.round(start + (i * (end - start)) / 3),
    end_time: Math.round(start + ((i + 1) * (end - start)) / 3),
  }));

test('recognition: an empty submit answer, then queued, processing and the utterances with speakers', async () => {
  const body = { audio: { url: 'https://files.example/a.wav?duration_s=12', format: 'wav' }, request: { enable_speaker_info: true } };
  const submitted = await asrSubmit('req-1', body);
  assert.deepEqual([submitted.status, submitted.code, submitted.body], [200, '20000000', undefined]);
  const { codes, last } = await codesUntilDone(() => asrQuery('req-1'));
  assert.deepEqual(codes, ['20000002', '20000001', '20000000']);
  assert.deepEqual(last.body, {
    audio_info: { duration: 12000 },
    result: {
      text: 'Sandbox sentence 1. Sandbox sentence 2.',
      utterances: [
        { text: 'Sandbox sentence 1.', start_time: 0, end_time: 6000, definite: true, words: words(0, 6000, '1.'), additions: { speaker: '1' } },
        { text: 'Sandbox sentence 2.', start_time: 6000, end_time: 12000, definite: true, words: words(6000, 12000, '2.'), additions: { speaker: '2' } },
      ],
    },
  });
});

test('recognition: no speakers unless asked, 60 s without duration_s, and a repeated submit is the same task', async () => {
  const body = { audio: { url: 'https://files.example/a.wav' } };
  await asrSubmit('req-2', body);
  assert.equal((await asrSubmit('req-2', body)).code, '20000000');
  assert.equal((await asrSubmit('req-2', { audio: { url: 'https://other.example/b.wav' } })).status, 400);
  const { last } = await codesUntilDone(() => asrQuery('req-2'));
  assert.equal(last.body.audio_info.duration, 60000);
  assert.equal(last.body.result.utterances.length, 6);
  assert.deepEqual(last.body.result.utterances[5], {
    text: 'Sandbox sentence 6.',
    start_time: 50000,
    end_time: 60000,
    definite: true,
    words: words(50000, 60000, '6.'),
  });
});

test('recognition: a task_outcome fault ends the task with 45000151', async () => {
  await addFault(sandbox.url, { kind: 'minutes', task_outcome: 'failed' });
  await asrSubmit('req-3', { audio: { url: 'https://files.example/a.wav' } });
  const { last } = await codesUntilDone(() => asrQuery('req-3'));
  const message = 'invalid audio format (sandbox fault: task_outcome failed)';
  assert.deepEqual(last, { status: 200, code: '45000151', body: { code: 45000151, message } });
});

test('recognition: a missing request id, a 1.0 resource id and an unknown task', async () => {
  const noId = await call('/api/v3/auc/bigmodel/submit', { audio: { url: 'https://f.example/a.wav' } }, ASR);
  const bigasr = await call(
    '/api/v3/auc/bigmodel/submit',
    { audio: { url: 'https://f.example/a.wav' } },
    {
      ...ASR,
      'x-api-resource-id': 'volc.bigasr.auc',
      'x-api-request-id': 'req-4',
    },
  );
  const unknown = await asrQuery('req-unknown');
  assert.deepEqual(
    [noId, bigasr, unknown].map((a) => [a.status, a.code]),
    [
      [400, '45000001'],
      [200, '20000000'],
      [400, '45000001'],
    ],
  );
  assert.deepEqual(unknown.body, { code: 45000001, message: 'X-Api-Request-Id req-unknown: no such task' });
});

test('a status fault applies to queries too', async () => {
  await asrSubmit('req-5', { audio: { url: 'https://files.example/a.wav' } });
  await addFault(sandbox.url, { kind: 'minutes', status: 503, times: 1 });
  assert.deepEqual(await asrQuery('req-5'), { status: 503, code: null, body: { code: 55000031, message: 'sandbox fault: status 503' } });
  assert.equal((await asrQuery('req-5')).status, 200);
});

test('submits and queries of both products are logged with the kind minutes', async () => {
  await larkSubmit('https://files.example/m.mp3');
  await asrSubmit('req-6', { audio: { url: 'https://files.example/a.wav' } });
  await asrQuery('req-6');
  const logged = (await loggedRequests(sandbox.url)).map((r) => [r.kind, r.path]);
  assert.deepEqual(logged, [
    ['minutes', '/api/v3/auc/lark/submit'],
    ['minutes', '/api/v3/auc/bigmodel/submit'],
    ['minutes', '/api/v3/auc/bigmodel/query'],
  ]);
});
