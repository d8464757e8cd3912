// The account's gallery (GET /v1/account/gallery) through a live gateway and the sandbox: the
// media of its succeeded image, video and erase tasks, newest first, in pages, filtered by kind,
// an erased video beside its original; nothing of another account; a 401 without a key.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { insertTask } from '../../src/store/tasks.js';
import { taskRow } from '../helpers/account-rows.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const badRequest = (error: string) => ({ status: 400, body: { error, type: 'invalid_request_error' } });

describe('account gallery', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  const get = (key: string, path: string) => gw.call(key, 'GET', path);

  /** Creates a task with `post` and answers its record once it has finished, from `path`. */
  const finished = async (key: string, post: string, body: unknown, path: string) => {
    const created = await gw.call(key, 'POST', post, body);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return eventually(async () => {
      const { body: task } = await get(key, `${path}/${created.body.id}`);
      return ['succeeded', 'failed'].includes(task.status) && task;
    }, 10_000);
  };
  const image = (key: string, prompt: string, n = 1) => finished(key, '/v1/images/async', { model: 'sandbox-image', prompt, n }, '/v1/images/async');
  const video = (key: string, returnLastFrame = false) =>
    finished(
      key,
      '/v1/videos/generations',
      { model: 'sandbox-video', content: [{ type: 'text', text: 'a toll gate' }], duration: 4, return_last_frame: returnLastFrame },
      '/v1/videos/generations',
    );
  const erase = (key: string, videoTaskId: string) => finished(key, '/v1/videos/erase-subtitle', { video_task_id: videoTaskId }, '/v1/videos/erase-subtitle');

  test('media URLs from the upstream that are not http(s) reach neither the gallery nor the asset library', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const safe = 'https://images.example.com/gate.png';
    const hostile = ['javascript:alert(document.cookie)', 'data:text/html,<script>alert(1)</script>', 'file:///etc/passwd'];
    const body = { created: 1_700_000_000, data: [...hostile.map((url) => ({ url })), { url: safe }] };
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 200, body, times: 1 });
    const task = await image(key, 'a hostile answer', 4);
    assert.equal(task.status, 'succeeded');
    const item = (await get(key, '/v1/account/gallery')).body.data.find((entry: { id: string }) => entry.id === task.id);
    assert.deepEqual(item.media, [{ type: 'image', url: safe, poster_url: null }]);
    const library = (await get(key, '/v1/assets?kind=image')).body.data.filter((asset: { task_id: string }) => asset.task_id === task.id);
    assert.deepEqual(
      library.map((asset: { url: string }) => asset.url),
      [safe],
    );
  });

  test('a stored task whose result names a non-http(s) video shows no media for it', async () => {
    const { accountId, key } = await gw.account();
    const result = JSON.stringify({ video_url: 'javascript:alert(1)', last_frame_url: 'data:image/png;base64,AAAA' });
    await insertTask(gw.gateway.store.db, { ...taskRow(accountId, { id: 'vid_hostile', createdAt: Date.now() }), result });
    const item = (await get(key, '/v1/account/gallery')).body.data.find((entry: { id: string }) => entry.id === 'vid_hostile');
    assert.deepEqual(item?.media, []);
  });

  test('an image task’s images, a video and its erased copy are listed once finished, newest first, the erased one beside its original', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const pictures = await image(key, 'two toll gates', 2);
    const original = await video(key, true);
    const erased = await erase(key, original.id);
    assert.deepEqual([pictures.status, original.status, erased.status], ['succeeded', 'succeeded', 'succeeded']);

    const { status, body } = await get(key, '/v1/account/gallery');
    assert.equal(status, 200);
    assert.equal(body.next_cursor, null);
    const times = (task: { id: string }) => body.data.find((item: { id: string }) => item.id === task.id);
    assert.deepEqual(body.data, [
      {
        id: erased.id,
        kind: 'erase',
        model: 'sandbox-erase',
        created_at: times(erased).created_at,
        finished_at: times(erased).finished_at,
        media: [{ type: 'video', url: erased.result.video_url, poster_url: null }],
        original: { task_id: original.id, type: 'video', url: original.result.video_url },
      },
      {
        id: original.id,
        kind: 'video',
        model: 'sandbox-video',
        created_at: times(original).created_at,
        finished_at: times(original).finished_at,
        media: [{ type: 'video', url: original.result.video_url, poster_url: original.result.last_frame_url }],
        original: null,
      },
      {
        id: pictures.id,
        kind: 'image',
        model: 'sandbox-image',
        created_at: times(pictures).created_at,
        finished_at: times(pictures).finished_at,
        media: pictures.result.data.map((picture: { url: string }) => ({ type: 'image', url: picture.url, poster_url: null })),
        original: null,
      },
    ]);
    assert.equal(body.data[2].media.length, 2);
    for (const item of body.data) assert.ok(Date.parse(item.finished_at) >= Date.parse(item.created_at), JSON.stringify(item));
  });

  test('the media URLs answer with the image and the video files', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    await image(key, 'a gate');
    await video(key);
    const { body } = await get(key, '/v1/account/gallery');
    const types = [];
    for (const item of body.data) {
      const res = await request(item.media[0].url);
      await res.body.arrayBuffer();
      types.push([res.statusCode, res.headers['content-type']]);
    }
    assert.deepEqual(types, [
      [200, 'video/mp4'],
      [200, 'image/png'],
    ]);
  });

  test('a failed task is left out', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', task_outcome: 'failed', times: 1 });
    assert.equal((await image(key, 'refused')).status, 'failed');
    const shown = await image(key, 'shown');
    assert.deepEqual(
      (await get(key, '/v1/account/gallery')).body.data.map((item: { id: string }) => item.id),
      [shown.id],
    );
  });

  test('an image task answered inline (b64_json) is listed with no media, its images left to the task’s GET', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const inline = await finished(key, '/v1/images/async', { model: 'sandbox-image', prompt: 'inline', response_format: 'b64_json' }, '/v1/images/async');
    assert.ok(inline.result.data[0].b64_json);
    const [item] = (await get(key, '/v1/account/gallery')).body.data;
    assert.deepEqual({ id: item.id, media: item.media }, { id: inline.id, media: [] });
  });

  test('an image task whose inline result is megabytes is listed with no media', async () => {
    const { accountId, key } = await gw.account();
    const huge = JSON.stringify({ created: 1, data: [{ b64_json: 'A'.repeat(2 * 1024 * 1024) }] });
    await insertTask(gw.gateway.store.db, { ...taskRow(accountId, { id: 'img_huge', createdAt: Date.now(), kind: 'image' }), result: huge });
    assert.deepEqual(
      (await get(key, '/v1/account/gallery')).body.data.map((item: { id: string; media: unknown[] }) => [item.id, item.media]),
      [['img_huge', []]],
    );
  });

  test('pages follow each other to the last one, every item once, newest first', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const made = [];
    for (const prompt of ['one', 'two', 'three', 'four', 'five']) made.push((await image(key, prompt)).id);
    const seen: string[] = [];
    const cursors: (string | null)[] = [];
    let path = '/v1/account/gallery?limit=2';
    for (;;) {
      const { status, body } = await get(key, path);
      assert.equal(status, 200);
      seen.push(...body.data.map((item: { id: string }) => item.id));
      cursors.push(body.next_cursor);
      if (body.next_cursor === null) break;
      path = `/v1/account/gallery?limit=2&cursor=${body.next_cursor}`;
    }
    assert.deepEqual(seen, made.reverse());
    assert.equal(cursors.length, 3);
  });

  test('the kind filter lists only tasks of that kind', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const picture = await image(key, 'a gate');
    const original = await video(key);
    const erased = await erase(key, original.id);
    const ids = async (kind: string) => (await get(key, `/v1/account/gallery?kind=${kind}`)).body.data.map((item: { id: string }) => item.id);
    assert.deepEqual(
      { image: await ids('image'), video: await ids('video'), erase: await ids('erase') },
      { image: [picture.id], video: [original.id], erase: [erased.id] },
    );
  });

  test('another account’s tasks never appear', async () => {
    const mine = await gw.account({ creditMicros: 5_000_000 });
    const theirs = await gw.account({ creditMicros: 5_000_000 });
    const own = await image(mine.key, 'mine');
    await image(theirs.key, 'theirs');
    await video(theirs.key);
    assert.deepEqual(
      (await get(mine.key, '/v1/account/gallery')).body.data.map((item: { id: string }) => item.id),
      [own.id],
    );
  });

  test('without an API key or session it is a 401', async () => {
    const res = await request(`${gw.url}/v1/account/gallery`);
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 401, body: { error: 'invalid or missing API key', type: 'auth_error' } },
    );
  });

  test('a kind with no media is a 400 naming the field', async () => {
    const { key } = await gw.account();
    assert.deepEqual(await get(key, '/v1/account/gallery?kind=minutes'), badRequest('kind: must be one of "image", "video", "erase"'));
  });
});
