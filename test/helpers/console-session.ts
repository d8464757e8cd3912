// Calls to the console's sign-in as a browser makes them: any headers, and the Set-Cookie answered.
import assert from 'node:assert/strict';
import { request } from 'undici';

export interface Answer {
  status: number;
  body: any;
  setCookie: string | undefined;
}

export async function send(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await request(url, {
    method: method as 'GET',
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  const setCookie = res.headers['set-cookie'];
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, setCookie: Array.isArray(setCookie) ? setCookie.join('\n') : setCookie };
}

/** The session secret a Set-Cookie carries, as a Cookie header sends it back. */
export function cookieOf(setCookie: string | undefined): string {
  const value = /^tollroute_session=([^;]*)/.exec(setCookie ?? '')?.[1];
  assert.ok(value, `a session cookie is set: ${setCookie}`);
  return `tollroute_session=${value}`;
}
