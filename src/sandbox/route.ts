import type { IncomingHttpHeaders } from 'node:http';
import type { FaultRule } from './faults.js';
import type { MediaStore } from './media.js';
import type { Reply } from './reply.js';
import type { TaskBook } from './tasks.js';

/** What a protocol handler sees: the request as received, a reply that carries the fault's behaviour. */
export interface SandboxContext {
  readonly method: string;
  /** The path without its query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Values of `:name` segments in the route's path. */
  readonly params: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON, or undefined when the body was empty or not JSON (then read `rawBody`). */
  readonly body: unknown;
  readonly rawBody: Buffer;
  readonly reply: Reply;
  /** Aborted when the client goes away before the answer is finished. */
  readonly signal: AbortSignal;
  /** The fault rule this request matched, for behaviours the handler itself applies (`task_outcome`). */
  readonly fault: FaultRule | undefined;
  readonly taskMs: number;
  /** This sandbox as the client addressed it (`http://host:port`), for URLs to the files it serves. */
  readonly baseUrl: string;
  /** The async tasks of every kind, on one clock. */
  readonly tasks: TaskBook;
  /** The generated files served at /__media/<name>. */
  readonly media: MediaStore;
}

/** One upstream protocol endpoint; a new protocol is one file exporting these and one line in route-table.ts. */
export interface SandboxRoute {
  /** The upstream kind fault rules select on (`chat`, `messages`, `speech`…). */
  readonly kind: string;
  readonly method: string;
  /** Exact path; a segment written `:name` matches any one segment. */
  readonly path: string;
  /** The body a `status` fault answers with when the rule gives none; OpenAI's error shape when absent. */
  readonly errorBody?: (status: number, message: string) => unknown;
  /** The model a request names, for protocols that name it in the path (fault rules select on it); else the body's `model`. */
  readonly modelOf?: (params: Readonly<Record<string, string>>) => string | undefined;
  /** Requests here start an async task (or generate, for images): only they take `task_outcome` rules. */
  readonly createsTask?: boolean;
  handle(ctx: SandboxContext): void | Promise<void>;
}

export interface RouteMatch {
  readonly route: SandboxRoute;
  readonly params: Record<string, string>;
}

export function findRoute(routes: readonly SandboxRoute[], method: string, path: string): RouteMatch | undefined {
  const segments = path.split('/');
  for (const route of routes) {
    if (route.method !== method) continue;
    const params = matchSegments(route.path.split('/'), segments);
    if (params) return { route, params };
  }
  return undefined;
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as string;
    const got = segments[i] as string;
    if (want.startsWith(':') && got !== '') params[want.slice(1)] = decodeURIComponent(got);
    else if (want !== got) return undefined;
  }
  return params;
}
