// What the sandbox tests share: plain fetch calls to a running sandbox, and an SSE reader.

export const AUTH = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };

export function postJson(url: string, body: unknown, headers: Record<string, string> = AUTH, signal?: AbortSignal) {
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

export async function postChat(base: string, body: unknown, headers: Record<string, string> = AUTH) {
  const res = await postJson(`${base}/v1/chat/completions`, body, headers);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** The `data:` payloads of an SSE body, JSON parsed except the final `[DONE]`. */
export function parseSse(text: string): any[] {
  return text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      assertDataLine(event);
      const data = event.slice('data: '.length);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

function assertDataLine(event: string): void {
  if (!event.startsWith('data: ') || event.includes('\n')) throw new Error(`not a single data line: ${event}`);
}

export async function streamChat(base: string, body: object) {
  const res = await postJson(`${base}/v1/chat/completions`, { ...body, stream: true });
  return { status: res.status, headers: res.headers, events: parseSse(await res.text()) };
}

/** The text a client rebuilds from streamed chunks. */
export function streamedText(events: any[]): string {
  return events
    .filter((e) => e !== '[DONE]')
    .map((e) => e.choices[0]?.delta.content ?? '')
    .join('');
}

export const ANTHROPIC = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

/** The payloads of an SSE body whose events are named, checking each name equals its payload's `type`. */
export function parseNamedSse(text: string): any[] {
  return text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      const lines = /^event: (\S+)\ndata: (.*)$/.exec(event);
      if (!lines) throw new Error(`not an event line and a data line: ${event}`);
      const data = JSON.parse(lines[2] as string);
      if (data.type !== lines[1]) throw new Error(`event ${lines[1]} carries type ${data.type}`);
      return data;
    });
}

/** A plain call to one of the sandbox's protocol paths: status, headers and the parsed JSON body. */
export async function postTo(url: string, body: unknown, headers: Record<string, string>) {
  const res = await postJson(url, body, headers);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** A streamed call (`stream: true` added) to a protocol whose SSE events are named. */
export async function streamNamed(url: string, body: object, headers: Record<string, string>) {
  const res = await postJson(url, { ...body, stream: true }, headers);
  return { status: res.status, headers: res.headers, events: parseNamedSse(await res.text()) };
}

/** Reads a streamed body until it ends or breaks; returns the text received and whether it broke. */
export async function readUntilCut(res: Response): Promise<{ text: string; cut: boolean }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, cut: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, cut: true };
  }
}

export async function addFault(base: string, rule: object): Promise<string> {
  const res = await postJson(`${base}/__sandbox/faults`, rule, { 'content-type': 'application/json' });
  if (res.status !== 200) throw new Error(`fault refused: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

export async function clearSandbox(base: string): Promise<void> {
  await fetch(`${base}/__sandbox/faults`, { method: 'DELETE' }).then((r) => r.arrayBuffer());
  await fetch(`${base}/__sandbox/requests`, { method: 'DELETE' }).then((r) => r.arrayBuffer());
}

export async function loggedRequests(base: string): Promise<any[]> {
  return ((await (await fetch(`${base}/__sandbox/requests`)).json()) as { data: any[] }).data;
}

/** Polls until `check` returns a value that is not undefined, or fails at the deadline. */
export async function pollUntil<T>(check: () => Promise<T | undefined>, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
