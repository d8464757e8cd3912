import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { WebSocketServer } from 'ws';
import { AstSession } from './ast-session.js';
import type { FaultBook } from './faults.js';
import type { RequestsLog } from './requests-log.js';
import { headerValue, speechErrorForStatus } from './speech.js';
import { hashOf } from './text.js';

// AST 2.0 simultaneous interpretation (volcengine-formats.md §4): the WebSocket upgrade, where the fault rule
// is taken and the faults that come before any frame (delay, hang, reset, status) are applied. The session
// that follows is ast-session.ts.

export const AST_PATH = '/api/v4/ast/v2/translate';
const REQUIRED_HEADERS = ['x-api-app-key', 'x-api-access-key', 'x-api-resource-id'];

export interface AstUpgrades {
  /** The http server's `upgrade` listener. */
  readonly handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Cuts every WebSocket and every upgrade still waiting (hang, delay). */
  closeAll(): void;
}

export function createAstUpgrades({ faults, log }: { faults: FaultBook; log: RequestsLog }): AstUpgrades {
  const wss = new WebSocketServer({ noServer: true });
  const pending = new Set<Duplex>();
  /** A `headers` fault's headers, for the 101 of the upgrade that matched it. */
  const extraHeaders = new WeakMap<IncomingMessage, Readonly<Record<string, string>>>();
  wss.on('headers', (headers, req) => {
    headers.push(`X-Tt-Logid: ${hashOf(req.headers['x-api-connect-id'] ?? req.url)}`);
    headers.push(...headerLines(extraHeaders.get(req)));
  });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = req.url ?? '/';
    const path = url.split('?')[0] as string;
    const kind = path === AST_PATH ? 'ast' : null;
    const entry = log.record({ kind, method: req.method ?? 'GET', path: url, headers: req.headers, body: null });
    if (!kind) return refuse(socket, { status: 404, body: speechErrorForStatus(404, `no sandbox WebSocket at ${path}`) });
    // a session is the work a `task_outcome` rule decides the fate of
    const rule = faults.take({ kind, path, model: undefined, createsTask: true });
    pending.add(socket);
    socket.once('close', () => {
      // still pending: the client gave up on a hang or a delay
      if (pending.delete(socket)) entry.aborted = true;
    });
    if (rule?.delay_ms) await delay(rule.delay_ms);
    if (socket.destroyed) return;
    if (rule?.hang) return awaitClientLeaving(socket);
    pending.delete(socket);
    // the upgrade request was read: no 101, no refusal, a TCP RST (an http server's upgrade socket is a net.Socket)
    if (rule?.reset) {
      (socket as Socket).resetAndDestroy();
      return;
    }
    const headers = rule?.headers;
    if (rule?.status !== undefined) {
      return refuse(socket, { status: rule.status, body: rule.body ?? speechErrorForStatus(rule.status, `sandbox fault: status ${rule.status}`), headers });
    }
    const missing = REQUIRED_HEADERS.filter((name) => !headerValue(req.headers, name));
    if (missing.length > 0) return refuse(socket, { status: 401, body: speechErrorForStatus(401, `missing header: ${missing.join(', ')}`), headers });
    if (rule?.headers) extraHeaders.set(req, rule.headers);
    wss.handleUpgrade(req, socket, head, (ws) => new AstSession(ws, entry, rule).start());
  }

  return {
    handleUpgrade(req, socket, head) {
      socket.on('error', () => {}); // a client reset before the upgrade is its own business
      upgrade(req, socket, head).catch(() => socket.destroy());
    },
    closeAll() {
      for (const socket of pending) socket.destroy();
      for (const ws of wss.clients) ws.terminate();
    },
  };
}

/**
 * Reads (and discards) a hung upgrade's socket until the client's end, then closes it. The http server hands
 * an upgrade socket over paused and half-open, so without this the client's FIN is never seen: the socket
 * would never close and the requests log never learn that the client gave up.
 */
function awaitClientLeaving(socket: Duplex): void {
  socket.once('end', () => socket.destroy());
  socket.resume();
}

/** `Name: value` lines; faults.ts refused any name or value that would break the head they go into. */
function headerLines(headers: Readonly<Record<string, string>> | undefined): string[] {
  return Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`);
}

interface Refusal {
  readonly status: number;
  readonly body: unknown;
  /** A `headers` fault's. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Answers an upgrade with a plain HTTP response: the handshake is refused. */
function refuse(socket: Duplex, { status, body, headers = {} }: Refusal): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/plain' : 'application/json';
  // keyed in lower case, so a fault's header replaces ours rather than doubling it (as Reply does)
  const fields: Record<string, string> = { 'content-type': type };
  for (const [name, value] of Object.entries(headers)) fields[name.toLowerCase()] = value;
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'Connection: close', ...headerLines(fields)];
  const head = `${lines.join('\r\n')}\r\n`;
  // destroyed once written, as ws does it: the client reads the answer and has no reason to keep the socket
  socket.once('finish', () => socket.destroy());
  socket.end(`${head}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}
