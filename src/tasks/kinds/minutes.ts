// Meeting minutes. vendor-minutes runs on the minutes product (transcript plus the features
// asked for); service-minutes runs recognition 2.0, then a chat model writes summary and
// chapters. Billed on the audio's real duration, plus the summary's tokens for service-minutes.

import { RefusedUrlError } from '../../net/url-policy.js';
import type { Catalogue } from '../../pipeline/catalogue.js';
import { createChatCompletion } from '../../upstreams/openai-chat/client.js';
import {
  fetchResultFile,
  type LarkQueryData,
  queryAsr,
  queryLark,
  type ResultFilePolicy,
  ResultFileTooLargeError,
  submitAsr,
  submitLark,
} from '../../upstreams/volc-minutes/client.js';
import { MAX_MINUTES_SECONDS, type MinutesRequest, serviceMinutesSubmitBody, vendorMinutesSubmitBody } from '../minutes-request.js';
import type { PollContext, PollOutcome, TaskKindHandler } from '../types.js';
import { readSummaryAnswer, SUMMARY_INSTRUCTIONS, transcriptFromAsr, transcriptFromLark } from './minutes-result.js';

const LARK_FILES = {
  summary: 'SummarizationFile',
  chapters: 'ChapterFile',
  translation: 'TranslationFile',
} as const;

export function minutesHandler({
  catalogueFor,
  publicUrl,
  resultFiles,
}: {
  /** Where the summary model resolves: a test task's in the test catalogue, so it stays on the sandbox. */
  catalogueFor: (livemode: boolean) => Catalogue;
  publicUrl: string;
  resultFiles: ResultFilePolicy;
}): TaskKindHandler {
  const resultUrl = (id: string) => `${publicUrl}/v1/audio/minutes/${id}`;

  /**
   * Spec 8: a recording lasts at most two hours. One whose length could not be read at creation
   * is held for two hours; when the upstream reports it longer, the task fails and is refunded in
   * full rather than billed two hours with the rest unbilled.
   */
  const tooLong = (durationSeconds: number, taskId: string, upstreamRecord?: unknown): PollOutcome | undefined =>
    durationSeconds > MAX_MINUTES_SECONDS
      ? {
          state: 'failed',
          error: { code: 'audio_too_long', message: `the recording lasts ${durationSeconds} s; minutes takes at most 2 hours (${MAX_MINUTES_SECONDS} s)` },
          ...(upstreamRecord !== undefined && { upstreamRecord }),
          webhook: { result_url: resultUrl(taskId) },
        }
      : undefined;

  async function pollVendor(upstreamId: string, model: Parameters<TaskKindHandler['poll']>[1], signal: AbortSignal, taskId: string): Promise<PollOutcome> {
    const data = await queryLark(model.upstream, upstreamId, signal);
    if (data.Status === 'running') return { state: 'running', status: 'processing', upstreamRecord: data };
    if (data.Status !== 'success' || !data.Result?.AudioTranscriptionFile) {
      return {
        state: 'failed',
        error: { code: `upstream_${data.ErrCode ?? 'failed'}`, message: data.ErrMessage || 'the minutes upstream failed the task' },
        upstreamRecord: data,
        webhook: { result_url: resultUrl(taskId) },
      };
    }
    try {
      return await readVendorResult(data, data.Result, signal, taskId);
    } catch (error) {
      // A result file at a refused address, or past the size limit, is no different on the next
      // poll: the task fails (refunded) now rather than at its timeout.
      if (error instanceof RefusedUrlError || error instanceof ResultFileTooLargeError) {
        const message =
          error instanceof RefusedUrlError
            ? 'the upstream named a result file at an address the gateway does not fetch from'
            : `the upstream's result file is larger than ${resultFiles.maxBytes} bytes`;
        return { state: 'failed', error: { code: 'result_file_refused', message }, upstreamRecord: data, webhook: { result_url: resultUrl(taskId) } };
      }
      throw error;
    }
  }

  async function readVendorResult(data: LarkQueryData, files: NonNullable<LarkQueryData['Result']>, signal: AbortSignal, taskId: string): Promise<PollOutcome> {
    const stated = typeof data.Duration === 'number' && data.Duration > 0 ? tooLong(Math.ceil(data.Duration), taskId, data) : undefined;
    if (stated) return stated; // before any result file is fetched
    const transcript = transcriptFromLark(await fetchResultFile(files.AudioTranscriptionFile!, signal, resultFiles));
    // The minutes product reports no duration (volcengine-formats 5.1): the transcript's end is the
    // audio's length; a Duration field, where an upstream gives one, wins.
    const lastEndMs = transcript.reduce((end, sentence) => Math.max(end, sentence.end_ms), 0);
    const durationSeconds = typeof data.Duration === 'number' && data.Duration > 0 ? data.Duration : Math.ceil(lastEndMs / 1000);
    const past = tooLong(Math.ceil(durationSeconds), taskId, data);
    if (past) return past;
    const result: Record<string, unknown> = { duration_seconds: durationSeconds, transcript };
    for (const [field, file] of Object.entries(LARK_FILES)) {
      const url = files[file];
      if (url) result[field] = await fetchResultFile(url, signal, resultFiles);
    }
    if (files.InformationExtractionFile) {
      const extracted = (await fetchResultFile(files.InformationExtractionFile, signal, resultFiles)) as { todo_list?: unknown; question_answer?: unknown };
      if (extracted.todo_list) result.todos = extracted.todo_list;
      if (extracted.question_answer) result.qa = extracted.question_answer;
    }
    if (result.chapters && typeof result.chapters === 'object' && 'chapter_summary' in (result.chapters as object)) {
      result.chapters = (result.chapters as { chapter_summary: unknown }).chapter_summary;
    }
    return { state: 'succeeded', result, units: { second: Math.ceil(durationSeconds) }, upstreamRecord: data, webhook: { result_url: resultUrl(taskId) } };
  }

  async function pollService(
    task: Parameters<TaskKindHandler['poll']>[0],
    model: Parameters<TaskKindHandler['poll']>[1],
    request: MinutesRequest,
    context: PollContext,
  ): Promise<PollOutcome> {
    const { signal } = context;
    const answer = await queryAsr(model.upstream, task.upstream_id!, signal);
    if (answer.state === 'running') return { state: 'running', status: 'processing' };
    if (answer.state === 'failed')
      return { state: 'failed', error: { code: `upstream_${answer.code}`, message: answer.message }, webhook: { result_url: resultUrl(task.id) } };
    const durationSeconds = Math.ceil((answer.result.audio_info?.duration ?? 0) / 1000);
    const past = tooLong(durationSeconds, task.id); // before the summary is paid for
    if (past) return past;
    const transcript = transcriptFromAsr(answer.result, request.need_word_time_series);
    const summaryModel = catalogueFor(task.livemode !== 0).resolve(model.config.summary_model ?? 'sandbox-chat', 'chat');
    // The summary is paid chat work, redone on every poll that gets this far: bounded like a generation.
    await context.startGeneration();
    const completion = await createChatCompletion(
      summaryModel.upstream,
      {
        model: summaryModel.upstreamModel,
        messages: [
          { role: 'system', content: SUMMARY_INSTRUCTIONS },
          { role: 'user', content: transcript.map((s) => `[${s.speaker ?? '?'}] ${s.text}`).join('\n') },
        ],
      },
      signal,
    );
    const { summary, chapters } = readSummaryAnswer(completion.choices[0]?.message.content ?? '', transcript);
    return {
      state: 'succeeded',
      result: { duration_seconds: durationSeconds, transcript, summary, chapters },
      // Recognition by the second, the summary by its tokens, both at this model's prices.
      units: { second: durationSeconds, input_token: completion.usage?.prompt_tokens ?? 0, output_token: completion.usage?.completion_tokens ?? 0 },
      webhook: { result_url: resultUrl(task.id) },
    };
  }

  return {
    kind: 'minutes',
    webhookType: 'minutes',
    async submit(task, model, signal) {
      const request = JSON.parse(task.request) as MinutesRequest;
      if (request.model === 'vendor-minutes') {
        return { upstreamId: await submitLark(model.upstream, { body: vendorMinutesSubmitBody(request), requestId: task.id, signal }) };
      }
      // Recognition 2.0 names its task by the request id we choose: our own task id.
      await submitAsr(model.upstream, { body: serviceMinutesSubmitBody(request, task.id), requestId: task.id, signal });
      return { upstreamId: task.id };
    },
    async poll(task, model, context) {
      const request = JSON.parse(task.request) as MinutesRequest;
      return request.model === 'vendor-minutes' ? pollVendor(task.upstream_id!, model, context.signal, task.id) : pollService(task, model, request, context);
    },
  };
}
