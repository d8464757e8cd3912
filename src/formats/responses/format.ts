// The responses API as an inbound format of the pivot (pipeline/pivot-call.ts).
import type { InboundFormat } from '../../pipeline/pivot-call.js';
import { randomHex } from '../../store/ids.js';
import { responseOf } from './from-pivot.js';
import { ResponsesStreamEncoder } from './stream.js';
import { pivotRequestOf } from './to-pivot.js';
import type { ResponsesRequest } from './types.js';

const idsFor = (model: string) => ({ id: `resp_${randomHex(24)}`, model, createdAt: Math.floor(Date.now() / 1000) });

export const responsesFormat: InboundFormat<ResponsesRequest> = {
  toPivot: (body, upstreamModel) => pivotRequestOf(body, { upstreamModel }),
  answer: (response, { body, model }) => responseOf(response, idsFor(model.id), body),
  encoder: ({ body, model }) => new ResponsesStreamEncoder(idsFor(model.id), body),
};
