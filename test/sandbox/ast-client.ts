// What the AST tests share: the frames a client sends, and a client that collects what the sandbox answers.
import { once } from 'node:events';
import WebSocket from 'ws';
import { type Audio, encodeTranslateRequest, type ReqParams } from '../../src/sandbox/ast-proto.js';

export const AST_PATH = '/api/v4/ast/v2/translate';
export const AST_HEADERS = {
  'X-Api-App-Key': 'app-1',
  'X-Api-Access-Key': 'token-1',
  'X-Api-Resource-Id': 'volc.service_type.10053',
  'X-Api-Connect-Id': 'conn-1',
};
export const SOURCE: Audio = { format: 'wav', codec: 'raw', rate: 16000, bits: 16, channel: 1 };

export const wsUrl = (base: string, path = AST_PATH) => `${base.replace('http://', 'ws://')}${path}`;

export const startSession = (request: ReqParams, target?: Audio) =>
  encodeTranslateRequest({ event: 100, request_meta: { SessionID: 'sess-1' }, source_audio: SOURCE, target_audio: target, request });
export const audio = (bytes: number) =>
  encodeTranslateRequest({ event: 200, request_meta: { SessionID: 'sess-1' }, source_audio: { binary_data: Buffer.alloc(bytes, 7) } });
export const finish = () => encodeTranslateRequest({ event: 102, request_meta: { SessionID: 'sess-1' } });

/**
 * Opens a socket, sends the frames at once, and collects the binary messages until the server closes. Raw, not
 * decoded: a test of a malformed frame must see the bytes that do not decode.
 */
export async function exchangeFrames(url: string, frames: Uint8Array[]): Promise<{ frames: Buffer[]; closeCode: number }> {
  const ws = new WebSocket(url, { headers: AST_HEADERS });
  const received: Buffer[] = [];
  ws.on('message', (data) => received.push(data as Buffer));
  const closed = once(ws, 'close');
  await once(ws, 'open');
  for (const frame of frames) ws.send(frame);
  const [closeCode] = (await closed) as [number];
  return { frames: received, closeCode };
}

/** An upgrade the server refuses: its status, headers and JSON body. */
export function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('error', () => {});
    ws.on('open', () => reject(new Error('the upgrade was accepted')));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
    });
  });
}
