import type { IncomingHttpHeaders } from 'node:http';
import type { SandboxContext } from './route.js';

/** OpenAI's error object; all four fields are required by its spec, so `param` and `code` are null, not absent. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAiError(message: string, type: string, code: string | null = null): OpenAiErrorBody {
  return { error: { message, type, param: null, code } };
}

/** The error type OpenAI commonly sends with a status (chat-formats.md §2.4). */
export function openAiErrorForStatus(status: number, message: string): OpenAiErrorBody {
  const type = status >= 500 ? 'server_error' : status === 429 ? 'requests' : 'invalid_request_error';
  return openAiError(message, type);
}

/** True when the request carries `Authorization: Bearer <something>`; the sandbox accepts any key. */
export function hasBearer(headers: IncomingHttpHeaders): boolean {
  const value = headers.authorization;
  return typeof value === 'string' && /^Bearer\s+\S/i.test(value);
}

export const UNAUTHORIZED = openAiError('Missing bearer token: send Authorization: Bearer <key>', 'invalid_request_error', 'invalid_api_key');

/** A 400 in OpenAI's error body. */
export const refuseInvalid = (ctx: SandboxContext, message: string) => ctx.reply.json(400, openAiError(message, 'invalid_request_error'));

/** The body as a multipart form (OpenAI's uploads), or undefined when it is not one. */
export async function readMultipartForm(ctx: SandboxContext): Promise<FormData | undefined> {
  const contentType = ctx.headers['content-type'] ?? '';
  if (!contentType.startsWith('multipart/form-data')) return undefined;
  try {
    return await new Response(new Uint8Array(ctx.rawBody), { headers: { 'content-type': contentType } }).formData();
  } catch {
    return undefined;
  }
}
