import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createAstUpgrades } from './ast.js';
import { controlRefusal, type SandboxControl } from './control-access.js';
import { answerFaultsControl, FaultBook } from './faults.js';
import { MediaStore } from './media.js';
import { openAiError, openAiErrorForStatus } from './openai-common.js';
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, type ReadBody, readBody } from './read-body.js';
import { Reply } from './reply.js';
import { answerRequestsControl, DEFAULT_LOG_LIMIT, RequestsLog } from './requests-log.js';
import { findRoute, type SandboxRoute } from './route.js';
import { SANDBOX_ROUTES } from './route-table.js';
import { TaskBook } from './tasks.js';
import { isRecord } from './text.js';

export interface SandboxOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** How long async upstream tasks take to finish. */
  taskMs?: number;
  /** Bodies larger than this are refused with 413. */
  maxBodyBytes?: number;
  /** The control API: from loopback only (the default), or off with no request log (beside real channels). */
  control?: SandboxControl;
}

export interface Sandbox {
  readonly url: string;
  readonly port: number;
  /** Turns the control API off and forgets the request log (a reload brought real channels beside it). */
  turnControlOff(): void;
  /** Stops listening and destroys every open socket, hanging requests included. */
  close(): Promise<void>;
}

interface SandboxState {
  readonly faults: FaultBook;
  readonly log: RequestsLog;
  readonly routes: readonly SandboxRoute[];
  readonly taskMs: number;
  readonly maxBodyBytes: number;
  readonly tasks: TaskBook;
  readonly media: MediaStore;
  control: SandboxControl;
}

/** Past this a non-JSON body is logged only in part: the log keeps 1000 requests in memory. */
const LOGGED_TEXT_LIMIT = 64 * 1024;

// A plain node:http server, no framework: benchmarks run it beside the gateway and should measure the gateway.
export async function startSandbox({
  host = '127.0.0.1',
  port = 0,
  taskMs = 1500,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  control = 'loopback',
}: SandboxOptions = {}): Promise<Sandbox> {
  const state: SandboxState = {
    faults: new FaultBook(),
    // With the control API off nobody may read the log: nothing is kept in it.
    log: new RequestsLog(control === 'off' ? 0 : DEFAULT_LOG_LIMIT),
    routes: SANDBOX_ROUTES,
    taskMs,
    maxBodyBytes,
    tasks: new TaskBook(taskMs),
    media: new MediaStore(),
    control,
  };
  const server = createServer({ noDelay: true }, (req, res) => {
    handleRequest(state, req, res).catch(() => res.destroy());
  });
  // WebSocket upgrades (AST speech translation) never reach handleRequest: they have no body and no Reply
  const ast = createAstUpgrades({ faults: state.faults, log: state.log });
  server.on('upgrade', ast.handleUpgrade);
  // keep-alive is Node's default; a longer idle window spares benchmark clients reconnecting between bursts
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    turnControlOff() {
      state.control = 'off';
      state.log.stopKeeping();
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        ast.closeAll(); // upgraded sockets are no longer the http server's to close
      });
      return closing;
    },
  };
}

async function handleRequest(state: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const method = req.method ?? 'GET';
  let body: ReadBody;
  try {
    body = await readBody(req, state.maxBodyBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) return; // the client left mid-body: nobody to answer
    // close after answering: the rest of the oversized body is still on the way and nobody will read it
    res.setHeader('connection', 'close');
    return writeJson(res, 413, openAiError(error.message, 'invalid_request_error'));
  }
  if (path.startsWith('/__sandbox/')) {
    // Whatever HOST the sandbox listens on, its faults and request log are this machine's alone.
    const refused = controlRefusal(state.control, req.socket.remoteAddress);
    if (refused) return writeJson(res, refused.status, openAiError(refused.message, 'invalid_request_error'));
    return answerControl(state, res, method, path, body);
  }

  const match = findRoute(state.routes, method, path);
  const kind = match?.route.kind ?? null;
  const entry = state.log.record({ kind, method, path: url, headers: req.headers, body: loggedBody(body) });
  const rule = state.faults.take({
    kind,
    path,
    model: match?.route.modelOf?.(match.params) ?? (isRecord(body.json) ? body.json.model : undefined),
    apiKey: presentedKey(req.headers),
    createsTask: match?.route.createsTask === true,
  });
  // each protocol answers its own errors in its own shape (Anthropic's differs from OpenAI's)
  const errorBody = match?.route.errorBody ?? openAiErrorForStatus;
  const controller = new AbortController();
  const reply = new Reply(res, controller.signal, {
    dropAfterChunks: rule?.drop_after_chunks,
    errorAfterChunks: rule?.error_after_chunks,
    chunkDelayMs: rule?.chunk_delay_ms,
    malformed: rule?.malformed,
    headers: rule?.headers,
  });
  res.once('close', () => {
    if (res.writableFinished) return;
    if (!reply.dropped) entry.aborted = true;
    controller.abort();
  });
  if (req.socket.destroyed) {
    entry.aborted = true; // gone before the close listener was attached
    return;
  }

  try {
    if (rule?.delay_ms) await delay(rule.delay_ms, undefined, { signal: controller.signal });
    // accepted and never answered: the close listener notes when the client gives up
    if (rule?.hang) return;
    // after the body was read, as a proxy or load balancer that gives up on the upstream does it
    if (rule?.reset) return reply.reset();
    if (rule?.status !== undefined) {
      const answer = rule.body ?? errorBody(rule.status, `sandbox fault: status ${rule.status}`);
      // a string goes out as it is: a proxy's HTML error page, not JSON
      if (typeof answer === 'string') return reply.send(rule.status, answer, { 'content-type': 'text/plain' });
      return reply.json(rule.status, answer);
    }
    if (!match) {
      return reply.json(404, openAiError(`no sandbox route for ${method} ${path}`, 'invalid_request_error', 'not_found'));
    }
    if (body.jsonError) return reply.json(400, errorBody(400, body.jsonError));
    await match.route.handle({
      method,
      path,
      query: new URLSearchParams(queryAt === -1 ? '' : url.slice(queryAt + 1)),
      params: match.params,
      headers: req.headers,
      body: body.json,
      rawBody: body.raw,
      reply,
      signal: controller.signal,
      fault: rule,
      taskMs: state.taskMs,
      baseUrl: baseUrlOf(req),
      tasks: state.tasks,
      media: state.media,
    });
  } catch (error) {
    if (controller.signal.aborted) return;
    // after the headers a status can no longer be told: cut the connection rather than fake an ending
    if (reply.headersSent) return reply.drop();
    reply.json(500, errorBody(500, `sandbox error: ${(error as Error).message}`));
  }
}

function answerControl(state: SandboxState, res: ServerResponse, method: string, path: string, body: ReadBody): void {
  if (body.jsonError) return writeJson(res, 400, openAiError(body.jsonError, 'invalid_request_error'));
  const answer =
    path === '/__sandbox/faults'
      ? answerFaultsControl(state.faults, method, body.json)
      : path === '/__sandbox/requests'
        ? answerRequestsControl(state.log, method)
        : { status: 404, body: openAiError(`no sandbox control at ${path}`, 'invalid_request_error', 'not_found') };
  writeJson(res, answer.status, answer.body);
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The Host the client used (so media URLs work behind 0.0.0.0 or a container port), else the socket's own address. */
function baseUrlOf(req: IncomingMessage): string {
  if (req.headers.host) return `http://${req.headers.host}`;
  const address = req.socket.localAddress ?? '127.0.0.1';
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}

function loggedBody({ raw, json }: ReadBody): unknown {
  if (json !== undefined) return json;
  if (raw.length === 0) return null;
  return raw.subarray(0, LOGGED_TEXT_LIMIT).toString('utf8');
}

/** The key a request carried, in whichever header its protocol uses (fault rules select on it): OpenAI's, Anthropic's, Volcengine's, Azure's, Gemini's. */
function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const bearer = /^Bearer\s+(\S+)/i.exec(headers.authorization ?? '')?.[1];
  const header = headers['x-api-key'] ?? headers['x-api-access-key'] ?? headers['api-key'] ?? headers['x-goog-api-key'];
  return bearer ?? (Array.isArray(header) ? header[0] : header);
}
