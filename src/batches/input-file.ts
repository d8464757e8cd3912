// A batch's input file: JSONL, one request a line, `{custom_id, method: "POST", url, body}`.
// Read whole when the batch is created; any fault refuses the batch (400) naming the line and field.
import { invalidRequest } from '../errors.js';
import type { NewBatchLine } from '../store/batches.js';

/** The endpoints a batch's lines may call: the metered JSON calls answered in one piece. */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/embeddings'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export const MAX_BATCH_LINES = 50_000;
const MAX_CUSTOM_ID_CHARS = 512;

export const isBatchEndpoint = (value: unknown): value is BatchEndpoint => typeof value === 'string' && (BATCH_ENDPOINTS as readonly string[]).includes(value);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The lines of `text` as a batch on `endpoint` runs them, or a 400 naming the first fault:
 * `input_file_id: line 3: url: …`. Blank lines are passed over; line numbers count from 1.
 */
export function parseBatchInput(text: string, endpoint: BatchEndpoint): NewBatchLine[] {
  const lines: NewBatchLine[] = [];
  const seen = new Set<string>();
  const rows = text.split('\n');
  for (let index = 0; index < rows.length; index++) {
    const raw = rows[index]!.trim();
    if (raw === '') continue;
    const at = `input_file_id: line ${index + 1}`;
    if (lines.length >= MAX_BATCH_LINES) throw invalidRequest(`input_file_id: more than ${MAX_BATCH_LINES} requests; split the file into several batches`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw invalidRequest(`${at}: not JSON; the file must be JSONL, one request object a line`);
    }
    if (!isRecord(parsed)) throw invalidRequest(`${at}: must be an object {custom_id, method, url, body}`);
    const { custom_id: customId, method, url, body } = parsed;
    if (typeof customId !== 'string' || customId === '') throw invalidRequest(`${at}: custom_id: must be a non-empty string`);
    if (customId.length > MAX_CUSTOM_ID_CHARS) throw invalidRequest(`${at}: custom_id: at most ${MAX_CUSTOM_ID_CHARS} characters`);
    if (seen.has(customId)) throw invalidRequest(`${at}: custom_id: ${JSON.stringify(customId)} is used by an earlier line; each line needs its own`);
    seen.add(customId);
    if (method !== 'POST') throw invalidRequest(`${at}: method: must be "POST"`);
    if (!isBatchEndpoint(url)) throw invalidRequest(`${at}: url: must be one of ${BATCH_ENDPOINTS.join(', ')}`);
    if (url !== endpoint) throw invalidRequest(`${at}: url: ${url} differs from the batch's endpoint ${endpoint}; a batch calls one endpoint`);
    if (!isRecord(body)) throw invalidRequest(`${at}: body: must be an object, the request's JSON body`);
    if (body.stream === true) throw invalidRequest(`${at}: body.stream: a batch line is answered in one piece; remove stream or set it false`);
    lines.push({ line_no: lines.length + 1, custom_id: customId, url, body: JSON.stringify(body) });
  }
  if (lines.length === 0) throw invalidRequest('input_file_id: the file holds no requests');
  return lines;
}
