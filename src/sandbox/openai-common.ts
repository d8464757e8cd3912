import type { IncomingHttpHeaders } from 'node:http';

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
