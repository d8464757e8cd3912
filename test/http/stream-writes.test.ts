// How a stream's bytes leave the gateway, write by write on the caller's socket: a completed
// stream's last data (its end marker) with the response's end, and nothing held past a turn.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Client } from 'undici';
import { holdLastDataForEnd } from '../../src/http/metered-handler.js';
import type { StreamMeter } from '../../src/pipeline/types.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const TERMINATOR = '0\r\n\r\n'; // the end of a chunked body

/** The bytes of each write made on `socket` from now on: one _write or _writev is one system call's worth. */
function recordWrites(socket: Socket): string[] {
  const seen: string[] = [];
  const plain = socket._write.bind(socket);
  const vectored = socket._writev?.bind(socket);
  socket._write = (chunk, encoding, callback) => {
    seen.push(Buffer.from(chunk, encoding).toString());
    plain(chunk, encoding, callback);
  };
  socket._writev = (chunks, callback) => {
    seen.push(chunks.map(({ chunk, encoding }) => Buffer.from(chunk, encoding as BufferEncoding).toString()).join(''));
    vectored!(chunks, callback);
  };
  return seen;
}

describe("a stream's writes to its caller", () => {
  let gw: TestGateway;
  /** The bytes of each write the gateway made on each connection it accepted, in order. */
  const writes: string[][] = [];
  before(async () => {
    gw = await startTestGateway();
    gw.gateway.app.server.on('connection', (socket: Socket) => writes.push(recordWrites(socket)));
  });
  after(() => gw.close());

  /** The writes of one call on a fresh connection, once its answer has been read whole. */
  async function writesOf(path: string, key: string, body: unknown): Promise<{ text: string; writes: string[] }> {
    const before = writes.length;
    const client = new Client(gw.url); // a connection of its own
    try {
      const res = await client.request({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
      assert.equal(res.statusCode, 200);
      const text = await res.body.text();
      assert.equal(writes.length, before + 1, 'one new connection');
      return { text, writes: writes[before]! };
    } finally {
      await client.close();
    }
  }

  test("a speech stream's end line leaves in the same write as the end of the response", async () => {
    const { key } = await gw.account();
    const { text, writes: made } = await writesOf('/v1/audio/speech/unidirectional?model=sandbox-tts', key, {
      req_params: { text: 'One sentence. Another sentence. A third one.', speaker: 's' },
    });
    const endLine = text.trimEnd().split('\n').at(-1)!;
    assert.match(endLine, /"code":20000000/);
    const last = made.at(-1)!;
    assert.ok(last.endsWith(TERMINATOR), 'the last write ends the body');
    assert.ok(last.includes(endLine), `the last write carries the end line too: ${JSON.stringify(last.slice(0, 80))}`);
  });

  test("a chat stream's [DONE] leaves in the same write as the end of the response", async () => {
    const { key } = await gw.account();
    const { text, writes: made } = await writesOf('/v1/chat/completions', key, {
      model: 'sandbox-chat',
      stream: true,
      messages: [{ role: 'user', content: 'tell me a story [[words:20]]' }],
    });
    assert.ok(text.trimEnd().endsWith('data: [DONE]'));
    const last = made.at(-1)!;
    assert.ok(last.endsWith(TERMINATOR));
    assert.ok(last.includes('data: [DONE]'), `the last write carries [DONE]: ${JSON.stringify(last.slice(0, 80))}`);
  });
});

/** A plain server piping a source through holdLastDataForEnd, as the metered handler does. */
async function serveHeldStream(feed: (source: PassThrough, meter: { completed: boolean }, response: ServerResponse) => void) {
  const server = createServer((_request, response) => {
    const meter = { completed: false }; // the one field holdLastDataForEnd reads
    response.writeHead(200, { 'content-type': 'text/plain' });
    const source = new PassThrough();
    source.pipe(response, { end: false });
    holdLastDataForEnd(source, response, meter as StreamMeter);
    feed(source, meter, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The whole body of a GET of `url`. */
async function bodyOf(url: string): Promise<string> {
  const [response] = (await once(get(url), 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of response) text += chunk.toString();
  return text;
}

test('data held after the end marker arrives inside the body when the response ends', async () => {
  const served = await serveHeldStream((source, meter, response) => {
    source.once('end', () => response.end());
    source.write('first\n');
    setTimeout(() => {
      meter.completed = true;
      source.write('after the marker\n');
      source.end('the end marker\n');
    }, 20);
  });
  try {
    const text = await bodyOf(served.url);
    assert.equal(text, 'first\nafter the marker\nthe end marker\n');
  } finally {
    served.close();
  }
});

test('data after the end marker is held one turn at most when the response does not end', async () => {
  const served = await serveHeldStream((source, meter) => {
    source.write('first\n');
    setTimeout(() => {
      meter.completed = true;
      source.write('after the marker\n'); // and no end: the cork must still let it go
    }, 20);
  });
  try {
    const [response] = (await once(get(served.url), 'response')) as [IncomingMessage];
    let text = '';
    const arrived = new Promise<void>((resolve) => {
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('after the marker')) resolve();
      });
    });
    const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 2_000).unref());
    assert.notEqual(await Promise.race([arrived, late]), 'late', `received only ${JSON.stringify(text)}`);
    response.destroy();
  } finally {
    served.close();
  }
});

test('data a turn or more after held data is held again, and leaves in one write with the end', async () => {
  let made: string[] = [];
  const served = await serveHeldStream((source, meter, response) => {
    made = recordWrites(response.socket as Socket);
    source.once('end', () => response.end());
    source.write('first\n');
    setTimeout(() => {
      meter.completed = true;
      source.write('before the marker\n'); // let out one turn later: the settle is still being written
      setTimeout(() => source.end('the end marker\n'), 10);
    }, 20);
  });
  try {
    const text = await bodyOf(served.url);
    assert.equal(text, 'first\nbefore the marker\nthe end marker\n');
    const last = made.at(-1)!;
    assert.ok(last.includes('the end marker') && last.endsWith(TERMINATOR), `the last write: ${JSON.stringify(last)}`);
  } finally {
    served.close();
  }
});
