// The fault matrix's audio transcriptions: one-piece (json) and streamed (SSE). A stream the caller
// leaves once text has come is billed the whole audio's seconds; the same call completed costs the same.
import assert from 'node:assert/strict';
import { FormData } from 'undici';
import type { TestGateway } from '../../helpers/gateway.js';
import { makeWav } from '../../helpers/wav.js';
import { postForm } from './calls.js';
import type { Family } from './matrix.js';
import { syncFamily } from './sync-families.js';

/** 2.5 s of audio: held and billed as 3 seconds (sandbox-transcribe, 100 micros a second). */
const AUDIO_MS = 2_500;

const transcription = (stream: boolean) => (gw: TestGateway) =>
  postForm(gw, '/v1/audio/transcriptions', () => {
    const form = new FormData();
    form.append('model', 'sandbox-transcribe');
    if (stream) form.append('stream', 'true');
    form.append('file', new Blob([new Uint8Array(makeWav({ ms: AUDIO_MS }))], { type: 'audio/wav' }), 'speech.wav');
    return form;
  });

export const TRANSCRIPTION_FAMILIES: Family[] = [
  syncFamily({ name: 'audio transcriptions, json', kind: 'transcriptions', send: transcription(false) }),
  syncFamily({
    name: 'audio transcriptions, stream',
    kind: 'transcriptions',
    // a data event whose object has an `error`, as chat completions' (what OpenAI's SDKs read)
    protocol: 'chat',
    send: transcription(true),
    leftBill: (units) => assert.deepEqual(units, { second: Math.ceil(AUDIO_MS / 1000) }),
  }),
];
