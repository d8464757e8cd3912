// The batch as OpenAI's Batch API answers it (instants in Unix seconds), and the lines of its
// output and error files.

import type { LineCounts } from '../store/batch-lines.js';
import type { BatchLineRow, BatchRow } from '../store/batches.js';
import { newId } from '../store/ids.js';

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** A new batch's id: `batch_` then a time-sorted id, as every row's (store/ids.ts). */
export const newBatchId = () => `batch_${newId('task').slice('task_'.length)}`;

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function batchView(row: BatchRow, counts: LineCounts) {
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    errors: null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: seconds(row.created_at),
    in_progress_at: seconds(row.in_progress_at),
    expires_at: seconds(row.expires_at),
    finalizing_at: seconds(row.finalizing_at),
    completed_at: seconds(row.completed_at),
    // Invalid input is refused when the batch is created, so a batch never fails after it.
    failed_at: null,
    expired_at: seconds(row.expired_at),
    cancelling_at: seconds(row.cancelling_at),
    cancelled_at: seconds(row.cancelled_at),
    request_counts: { total: counts.total, completed: counts.completed, failed: counts.failed },
    metadata: parseJson(row.metadata),
    usage: {
      input_tokens: counts.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: counts.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: counts.inputTokens + counts.outputTokens,
    },
    // false for a batch made with a test key (docs/api.md "Test mode").
    livemode: row.livemode !== 0,
  };
}

export type BatchView = ReturnType<typeof batchView>;

/** The line's id in the files: from its call's request id, or its batch and number when it was never sent. */
const lineId = (line: BatchLineRow) =>
  `batch_req_${line.request_id ? line.request_id.replace(/^req_/, '') : `${line.batch_id.slice('batch_'.length)}_${line.line_no}`}`;

/**
 * The line as its file carries it: an HTTP answer as `response` (an output line when 2xx, an error
 * line otherwise), a line never answered (not sent, interrupted) as `error` with its code.
 */
export function fileLine(line: BatchLineRow): string {
  const answered = line.status_code !== null;
  return JSON.stringify({
    id: lineId(line),
    custom_id: line.custom_id,
    response: answered ? { status_code: line.status_code, request_id: line.request_id, body: parseJson(line.response) } : null,
    error: answered ? null : { code: line.error_code ?? 'batch_line_failed', message: line.error_message ?? 'the request was not run' },
  });
}
