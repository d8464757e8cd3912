// OpenAI's images API (synchronous upstream): the gateway's task engine turns it into a task.
import { postForText } from '../http.js';
import { MalformedAnswerError } from '../malformed.js';
import type { Upstream } from '../pool.js';

export interface ImagesResult {
  created: number;
  data: { url?: string; b64_json?: string; revised_prompt?: string }[];
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number } | null;
}

export async function generateImages(upstream: Upstream, body: Record<string, unknown>, signal: AbortSignal): Promise<ImagesResult> {
  const text = await postForText(upstream, {
    path: '/v1/images/generations',
    body,
    headers: upstream.channel.api_key ? { authorization: `Bearer ${upstream.channel.api_key}` } : undefined,
    signal,
  });
  return readImagesAnswer(text);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isImage = (entry: unknown) => isRecord(entry) && (typeof entry.url === 'string' || typeof entry.b64_json === 'string');

/**
 * A 200's body as the images answer. Anything else throws MalformedAnswerError: images are billed
 * by the entries of `data`, so an answer without real images must never be read as "0 images".
 */
export function readImagesAnswer(text: string): ImagesResult {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new MalformedAnswerError('the images upstream answered 200 with a body that is not JSON');
  }
  if (!isRecord(answer) || !Array.isArray(answer.data)) throw new MalformedAnswerError('the images upstream answered 200 without a data array');
  if (answer.data.length === 0 || !answer.data.every(isImage))
    throw new MalformedAnswerError('the images upstream answered 200 without an image in every data entry');
  return answer as unknown as ImagesResult;
}
