// The account API's usage and spend (/v1/account/usage, /v1/account/spend) through a live gateway:
// each filter, cursor pages under concurrent inserts, the CSV export, and sums per day and model.
// Rows are written straight into the store with chosen times, so every answer is known exactly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { newId } from '../../src/store/ids.js';
import { insertUsage } from '../../src/store/usage.js';
import { usageRow } from '../helpers/account-rows.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const T0 = Date.UTC(2024, 4, 1, 12); // 2024-05-01T12:00:00Z
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** RFC 4180 text into rows of fields (quoted fields may hold commas, doubled quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (quoted) field += c;
    else if (c === ',') endField();
    else if (c === '\r' && text[i + 1] === '\n') {
      endField();
      rows.push(row);
      row = [];
      i++;
    } else field += c;
  }
  return rows;
}

describe('account API: usage and spend', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  const get = async (key: string, path: string) => gw.call(key, 'GET', path);
  const insert = (rows: Parameters<typeof insertUsage>[1][]) => gw.gateway.store.db.insertInto('usage').values(rows).execute();
  /** Every page of `path` (which has its own query), in order. */
  async function allPages(key: string, path: string): Promise<{ pages: number; ids: string[] }> {
    const ids: string[] = [];
    let pages = 0;
    for (let cursor: string | null = null; pages === 0 || cursor; pages++) {
      const { status, body } = await get(key, `${path}${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(status, 200);
      ids.push(...body.data.map((row: any) => row.id));
      cursor = body.next_cursor;
    }
    return { pages, ids };
  }

  describe('filters', () => {
    let key: string;
    let keyIds: [string, string];
    const ids: Record<string, string> = {};
    before(async () => {
      const account = await gw.account();
      key = account.key;
      const second = await gw.call(key, 'POST', '/v1/account/keys', { name: 'second' });
      keyIds = [account.keyId, second.body.id];
      const rows = [
        ['u1', 0, 'model-a', 'chat.completions', 0],
        ['u2', 1, 'model-b', 'messages', 1],
        ['u3', 2, 'model-a', 'messages', 0],
        ['u4', 3, 'model-b', 'chat.completions', 1],
      ] as const;
      for (const [name, hour, model, endpoint, keyIndex] of rows) {
        ids[name] = newId('use');
        await insertUsage(
          gw.gateway.store.db,
          usageRow(account.accountId, { id: ids[name]!, createdAt: T0 + hour * HOUR, model, endpoint, keyId: keyIds[keyIndex] }),
        );
      }
    });

    const cases: [string, () => string, string[]][] = [
      ['no filter', () => '', ['u4', 'u3', 'u2', 'u1']],
      ['model', () => 'model=model-a', ['u3', 'u1']],
      ['endpoint', () => 'endpoint=messages', ['u3', 'u2']],
      ['key_id', () => `key_id=${keyIds[1]}`, ['u4', 'u2']],
      ['from, which includes its instant', () => `from=${iso(T0 + HOUR)}`, ['u4', 'u3', 'u2']],
      ['to, which excludes its instant', () => `to=${iso(T0 + 2 * HOUR)}`, ['u2', 'u1']],
      ['model and a time range together', () => `model=model-b&from=${iso(T0)}&to=${iso(T0 + 3 * HOUR)}`, ['u2']],
    ];
    for (const [filter, query, expected] of cases) {
      test(`usage narrowed by ${filter} lists exactly ${expected.join(', ')}`, async () => {
        const { body } = await get(key, `/v1/account/usage?${query()}`);
        assert.deepEqual(
          body.data.map((row: any) => row.id),
          expected.map((name) => ids[name]),
        );
      });
    }
  });

  test('usage rows carry the whole record of the call, as the admin API shows it', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const chat = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] });
    assert.equal(chat.status, 200);
    await gw.settled(accountId);
    const mine = await get(key, '/v1/account/usage');
    assert.deepEqual(mine.body, { data: (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, next_cursor: null });
    assert.deepEqual(mine.body.data[0].units, { input_token: 3, output_token: 4 });
    assert.equal(mine.body.data[0].amount_micros, 3 * 2 + 4 * 8);
  });

  test('paging through more rows than a page returns every row once, newest first, ties in one millisecond included', async () => {
    const { accountId, key } = await gw.account();
    // 12 rows, three of them written in the same millisecond
    const rows = Array.from({ length: 12 }, (_, i) => usageRow(accountId, { id: newId('use'), createdAt: T0 + (i < 3 ? 0 : i) * 1000 }));
    await insert(rows);
    const newestFirst = rows.map((r) => r as { id: string; created_at: number }).sort((a, b) => b.created_at - a.created_at || (b.id < a.id ? -1 : 1));
    assert.deepEqual(await allPages(key, '/v1/account/usage?limit=5'), { pages: 3, ids: newestFirst.map((r) => r.id) });
  });

  test('rows written between pages neither repeat nor hide a row of the pages still to come', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const rows = Array.from({ length: 7 }, (_, i) => usageRow(accountId, { id: newId('use'), createdAt: T0 + i * 1000 }));
    await insert(rows);
    const first = (await get(key, '/v1/account/usage?limit=3')).body;
    // a real call and a row written meanwhile: both newer than anything listed so far
    await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'meanwhile' }] });
    await gw.settled(accountId);
    await insert([usageRow(accountId, { id: newId('use'), createdAt: Date.now() })]);
    const seen = [...first.data.map((row: any) => row.id)];
    for (let cursor = first.next_cursor; cursor; ) {
      const page = (await get(key, `/v1/account/usage?limit=3&cursor=${cursor}`)).body;
      seen.push(...page.data.map((row: any) => row.id));
      cursor = page.next_cursor;
    }
    assert.deepEqual(seen, rows.map((r) => r.id).reverse());
    assert.equal((await get(key, '/v1/account/usage')).body.data.length, 9, 'a new first page starts with the two new rows');
  });

  test('the CSV export holds every matching row, past one page of the store, in the JSON rows’ order and values', async () => {
    const { accountId, key } = await gw.account();
    const rows = Array.from({ length: 1203 }, (_, i) =>
      usageRow(accountId, { id: newId('use'), createdAt: T0 + i, model: i % 2 ? 'model-a' : 'model-b', units: { input_token: i } }),
    );
    await insert(rows);
    const res = await request(`${gw.url}/v1/account/usage?format=csv&model=model-a`, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(
      [res.statusCode, res.headers['content-type'], res.headers['content-disposition']],
      [200, 'text/csv; charset=utf-8', 'attachment; filename="usage.csv"'],
    );
    const [header, ...lines] = parseCsv(await res.body.text());
    const json: any[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: any = (await get(key, `/v1/account/usage?model=model-a&limit=500${cursor ? `&cursor=${cursor}` : ''}`)).body;
      json.push(...page.data);
      cursor = page.next_cursor;
    }
    assert.equal(json.length, 601);
    const asText = (value: unknown) => (value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
    assert.deepEqual(
      lines,
      json.map((row) => header!.map((column) => asText(row[column]))),
    );
  });

  test('a call’s usage row carries the channel’s answer time, the upstream figure of its Server-Timing', async () => {
    const { accountId, key } = await gw.account();
    const answer = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] }),
    });
    assert.equal(answer.statusCode, 200);
    await answer.body.text();
    const upstream = /upstream;dur=([\d.]+)/.exec(String(answer.headers['server-timing']))?.[1];
    assert.ok(upstream, `Server-Timing: ${answer.headers['server-timing']}`);
    await gw.settled(accountId);
    const { body } = await get(key, '/v1/account/usage');
    assert.equal(body.data.length, 1);
    // The row keeps the time rounded to a millisecond; the header shows it to two decimals, so
    // rounding the header's figure again can land one off (1.4996 is "1.50" there, 1 in the row).
    const stored = body.data[0].upstream_ms;
    assert.ok(Number.isInteger(stored) && Math.abs(stored - Number(upstream)) <= 0.505, `usage row ${stored} ms, Server-Timing ${upstream} ms`);
    assert.deepEqual([body.data[0].channel, body.data[0].attempts], ['sandbox-openai', 1]);
  });

  /** Makes one chat call on sandbox-chat (a stream with `stream`) and returns the account's usage rows. */
  async function usageOfOneCall(stream: boolean) {
    const { accountId, key } = await gw.account();
    const answer = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', stream, messages: [{ role: 'user', content: 'a b' }] }),
    });
    assert.equal(answer.statusCode, 200);
    await answer.body.text();
    await gw.settled(accountId);
    return { key, rows: (await get(key, '/v1/account/usage')).body.data };
  }
  const sandboxChatPrice = sandboxCatalogue('http://127.0.0.1:9').models!['sandbox-chat']!.price;

  test('a call’s usage row shows the prices it was billed at, next to its units', async () => {
    const { rows } = await usageOfOneCall(false);
    assert.deepEqual(rows[0].prices, sandboxChatPrice);
  });

  test('a streamed call’s usage row shows the prices it was billed at, next to its units', async () => {
    const { rows } = await usageOfOneCall(true);
    assert.deepEqual(rows[0].prices, sandboxChatPrice);
  });

  test('the CSV export has each row’s prices as JSON text', async () => {
    const { key } = await usageOfOneCall(false);
    const res = await request(`${gw.url}/v1/account/usage?format=csv`, { headers: { authorization: `Bearer ${key}` } });
    const [header, row] = parseCsv(await res.body.text());
    assert.deepEqual(JSON.parse(row![header!.indexOf('prices')]!), sandboxChatPrice);
  });

  test('the CSV export quotes fields holding commas, quotes and line breaks, doubling the quotes', async () => {
    const { accountId, key } = await gw.account();
    await insertUsage(
      gw.gateway.store.db,
      usageRow(accountId, {
        id: 'use_awkward',
        createdAt: T0,
        model: 'say "hi",\r\nthen go',
        units: { input_token: 3, output_token: 4 },
        flags: 'clamped,capped',
      }),
    );
    const res = await request(`${gw.url}/v1/account/usage?format=csv`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(
      await res.body.text(),
      'id,created_at,model,endpoint,units,prices,amount_micros,unbilled_micros,flags,key_id,request_id,client_request_id,hold_id,upstream_ms,channel,attempts,livemode\r\n' +
        `use_awkward,2024-05-01T12:00:00.000Z,"say ""hi"",\r\nthen go",chat.completions,"{""input_token"":3,""output_token"":4}",,10,0,"clamped,capped",,req_use_awkward,,,,,,true\r\n`,
    );
  });

  test('spend per UTC day sums requests and amounts exactly, within from and to', async () => {
    const { accountId, key } = await gw.account();
    const midnight = Date.UTC(2024, 4, 2);
    await insert([
      usageRow(accountId, { id: newId('use'), createdAt: midnight - 1, amountMicros: 7 }),
      usageRow(accountId, { id: newId('use'), createdAt: midnight, amountMicros: 11 }),
      usageRow(accountId, { id: newId('use'), createdAt: midnight + 5 * HOUR, amountMicros: 2_000_000_000_001, model: 'model-b' }),
      usageRow(accountId, { id: newId('use'), createdAt: midnight + 24 * HOUR, amountMicros: 5 }),
    ]);
    assert.deepEqual((await get(key, '/v1/account/spend?group_by=day')).body, {
      data: [
        { day: '2024-05-01', requests: 1, amount_micros: 7 },
        { day: '2024-05-02', requests: 2, amount_micros: 2_000_000_000_012 },
        { day: '2024-05-03', requests: 1, amount_micros: 5 },
      ],
    });
    assert.deepEqual((await get(key, `/v1/account/spend?from=${iso(midnight)}&to=${iso(midnight + 24 * HOUR)}`)).body, {
      data: [{ day: '2024-05-02', requests: 2, amount_micros: 2_000_000_000_012 }],
    });
  });

  test('spend per model sums requests and amounts exactly, for the account alone', async () => {
    const { accountId, key } = await gw.account();
    const other = await gw.account();
    await insert([
      usageRow(accountId, { id: newId('use'), createdAt: T0, model: 'model-b', amountMicros: 3 }),
      usageRow(accountId, { id: newId('use'), createdAt: T0 + 1, model: 'model-a', amountMicros: 4 }),
      usageRow(accountId, { id: newId('use'), createdAt: T0 + 2, model: 'model-b', amountMicros: 5 }),
      usageRow(other.accountId, { id: newId('use'), createdAt: T0, model: 'model-a', amountMicros: 100 }),
    ]);
    assert.deepEqual((await get(key, '/v1/account/spend?group_by=model')).body, {
      data: [
        { model: 'model-a', requests: 1, amount_micros: 4 },
        { model: 'model-b', requests: 2, amount_micros: 8 },
      ],
    });
  });

  test("filtering usage by another account's key is a 404, as for a key that never existed", async () => {
    const { key } = await gw.account();
    const other = await gw.account();
    assert.deepEqual(await get(key, `/v1/account/usage?key_id=${other.keyId}`), {
      status: 404,
      body: { error: `key ${other.keyId} not found`, type: 'not_found_error' },
    });
    assert.deepEqual(await get(key, '/v1/account/usage?key_id=key_none'), {
      status: 404,
      body: { error: 'key key_none not found', type: 'not_found_error' },
    });
  });
});
