// The two minutes upstreams (volcengine-formats 5.1 and 5.2): the minutes product (submit, then
// query by TaskID) and recognition 2.0 (submit and query keyed by X-Api-Request-Id).

import { safeRequest } from '../../net/safe-request.js';
import { headerValue } from '../http.js';
import { isJsonObject, requestJson } from '../http-json.js';
import { MalformedAnswerError } from '../malformed.js';
import type { Upstream } from '../pool.js';

export const MINUTES_PATHS = {
  larkSubmit: '/api/v3/auc/lark/submit',
  larkQuery: '/api/v3/auc/lark/query',
  asrSubmit: '/api/v3/auc/bigmodel/submit',
  asrQuery: '/api/v3/auc/bigmodel/query',
};
export const RESOURCE_IDS = { lark: 'volc.lark.minutes', asr: 'volc.seedasr.auc' };
export const STATUS = { ok: '20000000', processing: '20000001', queued: '20000002' };

function speechAuth(upstream: Upstream): Record<string, string> {
  const { api_key, app_id } = upstream.channel;
  return app_id ? { 'x-api-app-key': app_id, ...(api_key && { 'x-api-access-key': api_key }) } : { ...(api_key && { 'x-api-key': api_key }) };
}

export interface LarkQueryData {
  TaskID: string;
  Status: 'running' | 'success' | 'failed' | string;
  ErrCode?: number;
  ErrMessage?: string;
  Duration?: number;
  Result?: Partial<Record<'AudioTranscriptionFile' | 'ChapterFile' | 'InformationExtractionFile' | 'SummarizationFile' | 'TranslationFile', string>>;
}

export async function submitLark(upstream: Upstream, args: { body: unknown; requestId: string; signal: AbortSignal }): Promise<string> {
  const { body } = await requestJson<{ Data: { TaskID?: unknown } }>(upstream, {
    method: 'POST',
    path: MINUTES_PATHS.larkSubmit,
    body: args.body,
    signal: args.signal,
    headers: { ...speechAuth(upstream), 'x-api-resource-id': RESOURCE_IDS.lark, 'x-api-request-id': args.requestId, 'x-api-sequence': '-1' },
  });
  const taskId = body?.Data?.TaskID;
  if (typeof taskId !== 'string') throw new MalformedAnswerError('the minutes upstream answered a submit without a TaskID');
  return taskId;
}

export async function queryLark(upstream: Upstream, taskId: string, signal: AbortSignal): Promise<LarkQueryData> {
  const { body } = await requestJson<{ Data: unknown }>(upstream, {
    method: 'POST',
    path: MINUTES_PATHS.larkQuery,
    body: { TaskID: taskId },
    signal,
    headers: { ...speechAuth(upstream), 'x-api-resource-id': RESOURCE_IDS.lark, 'x-api-request-id': taskId },
  });
  // Without a status the answer says nothing about the task: not "failed", just no answer.
  if (!isJsonObject(body?.Data) || typeof body.Data.Status !== 'string')
    throw new MalformedAnswerError('the minutes upstream answered a query without Data.Status');
  return body.Data as unknown as LarkQueryData;
}

/** Recognition 2.0 answers a submit with an empty body; the status header says whether it was taken. */
export async function submitAsr(upstream: Upstream, args: { body: unknown; requestId: string; signal: AbortSignal }): Promise<void> {
  const { headers } = await requestJson(upstream, {
    method: 'POST',
    path: MINUTES_PATHS.asrSubmit,
    body: args.body,
    signal: args.signal,
    headers: { ...speechAuth(upstream), 'x-api-resource-id': RESOURCE_IDS.asr, 'x-api-request-id': args.requestId, 'x-api-sequence': '-1' },
  });
  const status = headerValue(headers['x-api-status-code']);
  if (status !== STATUS.ok) throw new Error(`recognition submit refused: ${status} ${headerValue(headers['x-api-message']) ?? ''}`.trim());
}

export interface AsrResult {
  audio_info?: { duration?: number };
  result?: { text?: string; utterances?: { text: string; start_time: number; end_time: number; additions?: { speaker?: string }; words?: unknown[] }[] };
}

export type AsrQuery = { state: 'running' } | { state: 'done'; result: AsrResult } | { state: 'failed'; code: string; message: string };

export async function queryAsr(upstream: Upstream, requestId: string, signal: AbortSignal): Promise<AsrQuery> {
  const { headers, body } = await requestJson<{ message: string }>(upstream, {
    method: 'POST',
    path: MINUTES_PATHS.asrQuery,
    body: {},
    signal,
    headers: { ...speechAuth(upstream), 'x-api-resource-id': RESOURCE_IDS.asr, 'x-api-request-id': requestId },
  });
  const status = headerValue(headers['x-api-status-code']);
  if (status === undefined) throw new MalformedAnswerError('recognition answered a query without X-Api-Status-Code');
  if (status === STATUS.ok) {
    if (!isJsonObject(body)) throw new MalformedAnswerError('recognition reported a finished task without a result body');
    return { state: 'done', result: body as AsrResult };
  }
  if (status === STATUS.processing || status === STATUS.queued) return { state: 'running' };
  return { state: 'failed', code: status, message: headerValue(headers['x-api-message']) ?? body?.message ?? 'recognition failed' };
}

export interface ResultFilePolicy {
  /** Operator's `network.allow_private_urls`. */
  allowPrivate: boolean;
  /** `files.result_file_max_bytes`: a longer file fails the read rather than filling memory. */
  maxBytes: number;
  timeoutMs?: number;
}

/** The file is longer than ResultFilePolicy.maxBytes. */
export class ResultFileTooLargeError extends Error {
  override name = 'ResultFileTooLargeError';
}

const RESULT_FILE_TIMEOUT_MS = 60_000;

/**
 * The minutes product's results are JSON files at URLs valid for a day: read them while they last.
 * The URL comes from the upstream's answer, so it is fetched as any user-supplied URL is (the
 * address policy, no redirects) and read only up to the size limit.
 */
export async function fetchResultFile(url: string, signal: AbortSignal, policy: ResultFilePolicy): Promise<unknown> {
  const response = await safeRequest(url, {
    field: 'result file',
    signal,
    allowPrivate: policy.allowPrivate,
    timeoutMs: policy.timeoutMs ?? RESULT_FILE_TIMEOUT_MS,
    maxResponseBytes: policy.maxBytes,
  });
  if (response.status !== 200) throw new Error(`result file answered ${response.status}`);
  if (response.truncated) throw new ResultFileTooLargeError(`result file is larger than ${policy.maxBytes} bytes`);
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new MalformedAnswerError('a minutes result file is not JSON');
  }
}
