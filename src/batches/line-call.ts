// One line of a batch, sent through the gateway's own routes (app.inject): validation, translation,
// failover, hold and settle, usage rows, log line and metrics exactly as for a live call, billed at
// the model's batch price (the route sees a batch line: line-auth.ts).
import type { FastifyInstance } from 'fastify';
import { type LineEnd, lineRequestTag } from '../store/batch-lines.js';
import type { BatchLineRow } from '../store/batches.js';
import { BATCH_LINE_HEADER, type BatchLineAuth } from './line-auth.js';

const ANTHROPIC_VERSION = '2023-06-01';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);

/** Tokens of an answer's usage, whichever protocol wrote it (chat and embeddings: prompt/completion; messages, responses: input/output). */
export function tokensOf(body: unknown): { inputTokens: number; outputTokens: number } {
  const usage = isRecord(body) && isRecord(body.usage) ? body.usage : {};
  return {
    inputTokens: count(usage.prompt_tokens ?? usage.input_tokens),
    outputTokens: count(usage.completion_tokens ?? usage.output_tokens),
  };
}

export async function callLine(app: FastifyInstance, auth: BatchLineAuth, line: BatchLineRow): Promise<LineEnd> {
  const answer = await app.inject({
    method: 'POST',
    url: line.url,
    headers: {
      'content-type': 'application/json',
      [BATCH_LINE_HEADER]: auth.credential(line.batch_id),
      // The messages API asks its version of every caller; a batch's line is written for this one.
      ...(line.url === '/v1/messages' && { 'anthropic-version': ANTHROPIC_VERSION }),
      // The batch and line, as the caller's own request id: on the call's usage row and log line, where
      // a restart finds whether an interrupted line was charged (store/batch-lines.ts).
      'x-request-id': lineRequestTag(line),
    },
    payload: line.body,
  });
  const requestId = typeof answer.headers['x-request-id'] === 'string' ? answer.headers['x-request-id'] : null;
  let body: unknown;
  let response: string;
  try {
    body = JSON.parse(answer.body);
    response = answer.body;
  } catch {
    body = answer.body;
    response = JSON.stringify(answer.body);
  }
  const ok = answer.statusCode >= 200 && answer.statusCode < 300;
  return { status: ok ? 'succeeded' : 'failed', requestId, statusCode: answer.statusCode, response, ...(ok && tokensOf(body)) };
}
