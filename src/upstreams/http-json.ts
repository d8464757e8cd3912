// JSON GET and DELETE on a channel's pool, for task upstreams that are polled.

import { headerValue, UpstreamHttpError } from './http.js';
import { MalformedAnswerError } from './malformed.js';
import type { Upstream } from './pool.js';

/** The upstream's JSON answer, typed as the shape the caller reads (and checks) of it. */
export async function requestJson<Answer = unknown>(
  upstream: Upstream,
  args: { method: 'GET' | 'DELETE' | 'POST'; path: string; body?: unknown; headers?: Record<string, string>; signal: AbortSignal },
): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: Partial<Answer> | undefined }> {
  const response = await upstream.pool.request({
    method: args.method,
    path: upstream.basePath + args.path,
    headers: { ...(args.body !== undefined && { 'content-type': 'application/json' }), ...args.headers },
    body: args.body === undefined ? undefined : JSON.stringify(args.body),
    signal: args.signal,
  });
  const text = await response.body.text();
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const { statusCode, headers } = response;
    throw new UpstreamHttpError(statusCode, text.slice(0, 64 * 1024), headerValue(headers['content-type']), headerValue(headers['retry-after']));
  }
  return { statusCode: response.statusCode, headers: response.headers, body: text ? (parseAnswer(text, args.path) as Partial<Answer>) : undefined };
}

function parseAnswer(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedAnswerError(`${path}: the upstream answered a success status with a body that is not JSON`);
  }
}

export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const bearer = (upstream: Upstream): Record<string, string> => (upstream.channel.api_key ? { authorization: `Bearer ${upstream.channel.api_key}` } : {});
