// OpenAI audio transcriptions over an OpenAI-style channel: `/v1/audio/transcriptions` with a
// bearer key, or Azure OpenAI's deployment path (or its v1 path) with `api-key`. The upload goes
// as multipart, the file read from disk while it is sent (never whole in memory). The answer comes
// in one piece (JSON or text), or as an SSE stream passed through under a meter.
import { openAsBlob } from 'node:fs';
import type { Readable } from 'node:stream';
import { FormData } from 'undici';
import type { Units } from '../../billing/prices.js';
import type { ModelConfig } from '../../config/schema.js';
import { headerValue, UpstreamHttpError, type UpstreamResponse } from '../http.js';
import { openAiAuthHeaders } from '../openai-chat/endpoint.js';
import type { Upstream } from '../pool.js';
import { observeSseJson } from '../sse.js';
import { type TranscriptionEvent, TranscriptionStreamMeter } from './stream-meter.js';
import { billedUnits, isJsonFormat, type ResponseFormat, reportedUsage } from './usage.js';

export interface TranscriptionRequest {
  language?: string;
  prompt?: string;
  responseFormat: ResponseFormat;
  /** As the caller wrote it: the upstream reads the number. */
  temperature?: string;
  timestampGranularities: string[];
  include: string[];
  stream: boolean;
}

export interface UploadedAudio {
  path: string;
  /** The name the upstream is told, its extension naming the format (OpenAI checks it). */
  filename: string;
  contentType: string;
}

export interface TranscriptionCall {
  request: TranscriptionRequest;
  audio: UploadedAudio;
  /** The model's name at the channel (Azure: the deployment). */
  upstreamModel: string;
  model: ModelConfig;
  /** The hold's units, billed when the upstream reports nothing usable. */
  estimate: Units;
  signal: AbortSignal;
}

export type TranscriptionAnswer =
  | { kind: 'json'; text: string; units: Units }
  | { kind: 'text'; text: string; contentType: string; units: Units }
  | { kind: 'stream'; body: Readable; meter: TranscriptionStreamMeter };

const ERROR_BODY_LIMIT = 64 * 1024;

export function transcriptionsPath(upstream: Upstream, model: string): string {
  const { channel } = upstream;
  if (channel.kind !== 'azure') return '/v1/audio/transcriptions';
  if (channel.api_version === undefined) return '/openai/v1/audio/transcriptions';
  return `/openai/deployments/${encodeURIComponent(model)}/audio/transcriptions?api-version=${encodeURIComponent(channel.api_version)}`;
}

async function transcriptionForm({ request, audio, upstreamModel }: TranscriptionCall): Promise<FormData> {
  const form = new FormData();
  form.append('model', upstreamModel);
  form.append('file', await openAsBlob(audio.path, { type: audio.contentType }), audio.filename);
  const optional = { language: request.language, prompt: request.prompt, temperature: request.temperature };
  for (const [name, value] of Object.entries(optional)) if (value !== undefined) form.append(name, value);
  form.append('response_format', request.responseFormat);
  for (const granularity of request.timestampGranularities) form.append('timestamp_granularities[]', granularity);
  for (const item of request.include) form.append('include[]', item);
  if (request.stream) form.append('stream', 'true');
  return form;
}

async function postTranscription(upstream: Upstream, call: TranscriptionCall): Promise<UpstreamResponse> {
  const response = await upstream.pool.request({
    method: 'POST',
    path: upstream.basePath + transcriptionsPath(upstream, call.upstreamModel),
    headers: openAiAuthHeaders(upstream),
    body: await transcriptionForm(call),
    signal: call.signal,
  });
  if (response.statusCode >= 200 && response.statusCode < 300) return response as unknown as UpstreamResponse;
  throw new UpstreamHttpError(
    response.statusCode,
    await limitedText(response.body),
    headerValue(response.headers['content-type']),
    headerValue(response.headers['retry-after']),
  );
}

/** Sends the audio; the answer in one piece, or (stream) its events passed through under a meter. */
export async function transcribe(upstream: Upstream, call: TranscriptionCall): Promise<TranscriptionAnswer> {
  const response = await postTranscription(upstream, call);
  const contentType = headerValue(response.headers['content-type']) ?? '';
  if (call.request.stream && contentType.startsWith('text/event-stream')) {
    const meter = new TranscriptionStreamMeter(call.model, call.estimate);
    const body = observeSseJson(response.body, (event: TranscriptionEvent) => {
      meter.observe(event);
      return undefined;
    });
    return { kind: 'stream', body, meter };
  }
  // (a model that does not stream, whisper-1, answers a stream request in one piece)
  const text = await response.body.text();
  if (!isJsonFormat(call.request.responseFormat) && !contentType.includes('json')) {
    return { kind: 'text', text, contentType: contentType || 'text/plain; charset=utf-8', units: call.estimate };
  }
  // Malformed JSON is the upstream's failure (nothing to pass on, nothing charged).
  const answer: unknown = JSON.parse(text);
  return { kind: 'json', text, units: billedUnits(reportedUsage(answer), call.model, call.estimate) };
}

async function limitedText(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    parts.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= ERROR_BODY_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).subarray(0, ERROR_BODY_LIMIT).toString('utf8');
}
