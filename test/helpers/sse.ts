// Reading a gateway's SSE answer as a list of events, for tests that check order and shape.
import { request } from 'undici';

export interface ReadEvent {
  event: string | undefined;
  data: any;
}

export async function postForEvents(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string; events: ReadEvent[] }> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.body.text();
  const events = text
    .split(/\n\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: data.startsWith('{') ? JSON.parse(data) : data };
    });
  return { status: res.statusCode, contentType: String(res.headers['content-type']), events };
}
