// Volcengine speech synthesis (V3, unidirectional HTTP stream). The caller's body goes upstream
// as it is; only authentication is the channel's own.
import type { Readable } from 'node:stream';
import { withFields } from '../../with-fields.js';
import { postJson } from '../http.js';
import { observeNdjson } from '../ndjson.js';
import type { Upstream } from '../pool.js';
import { EMPTY_AUDIO_LINE_BYTES, isAudioLine } from './audio-line.js';
import { SpeechStreamMeter } from './usage.js';

export const SPEECH_PATH = '/api/v3/tts/unidirectional';

/** New-console channels carry one API key; old-console ones an app id and an access token. */
export function speechAuthHeaders(upstream: Upstream): Record<string, string> {
  const { api_key, app_id, resource_id } = upstream.channel;
  const credentials: Record<string, string> = app_id
    ? { 'x-api-app-id': app_id, ...(api_key && { 'x-api-access-key': api_key }) }
    : { ...(api_key && { 'x-api-key': api_key }) };
  return resource_id ? withFields(credentials, { 'x-api-resource-id': resource_id }) : credentials;
}

export async function streamSpeech(
  upstream: Upstream,
  args: { body: unknown; signal: AbortSignal; estimatedCharacters: number },
): Promise<{ body: Readable; meter: SpeechStreamMeter }> {
  const response = await postJson(upstream, {
    path: SPEECH_PATH,
    body: args.body,
    // Without this header the final line carries no usage, and billing would fall back to our estimate.
    headers: withFields(speechAuthHeaders(upstream), { 'x-control-require-usage-tokens-return': 'text_words' }),
    signal: args.signal,
  });
  const meter = new SpeechStreamMeter(args.estimatedCharacters);
  // An audio line is counted as the line it is, its audio neither decoded nor parsed (audio-line.ts).
  const skimAudio = (bytes: Buffer, start: number, end: number) => {
    if (!isAudioLine(bytes, start, end)) return false;
    meter.observeAudioLine(end - start > EMPTY_AUDIO_LINE_BYTES);
    return true;
  };
  return { body: observeNdjson(response.body, (line: Parameters<typeof meter.observe>[0]) => meter.observe(line), skimAudio), meter };
}
