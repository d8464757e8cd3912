// The Gemini API as an inbound format of the pivot (pipeline/pivot-call.ts): a plain answer, or a
// stream as SSE (`?alt=sse`) or as one JSON array, each its own format object.
import type { InboundFormat } from '../../pipeline/pivot-call.js';
import { randomHex } from '../../store/ids.js';
import type { GenerateContentRequest } from '../../upstreams/gemini/types.js';
import { generateContentResponseOf } from './from-pivot.js';
import { GeminiJsonArrayEncoder, GeminiSseEncoder } from './stream.js';
import { pivotRequestOf } from './to-pivot.js';

const idsFor = (model: string) => ({ model, responseId: randomHex(12) });

export type GeminiStreamForm = 'sse' | 'array';

function geminiFormat(stream: GeminiStreamForm | undefined): InboundFormat<GenerateContentRequest> {
  return {
    toPivot: (body, upstreamModel) => pivotRequestOf(body, { upstreamModel, stream: stream !== undefined }),
    answer: (response, { model }) => generateContentResponseOf(response, idsFor(model.id)),
    encoder: ({ model }) => (stream === 'array' ? new GeminiJsonArrayEncoder(idsFor(model.id)) : new GeminiSseEncoder(idsFor(model.id))),
    streamContentType: () => (stream === 'array' ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8'),
  };
}

export const geminiFormats = {
  plain: geminiFormat(undefined),
  sse: geminiFormat('sse'),
  array: geminiFormat('array'),
};
