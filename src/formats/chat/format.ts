// Chat completions as an inbound format of the pivot (pipeline/pivot-call.ts).
import type { InboundFormat } from '../../pipeline/pivot-call.js';
import { randomHex } from '../../store/ids.js';
import type { ChatRequest } from '../../upstreams/openai-chat/types.js';
import { ChatStreamEncoder, chatCompletionOf } from './from-pivot.js';
import { pivotRequestOfChat } from './to-pivot.js';

const idsFor = (model: string) => ({ id: `chatcmpl-${randomHex(12)}`, model, created: Math.floor(Date.now() / 1000) });

export const chatFormat: InboundFormat<ChatRequest> = {
  toPivot: (body, upstreamModel) => pivotRequestOfChat(body, { upstreamModel }),
  answer: (response, { model }) => chatCompletionOf(response, idsFor(model.id)),
  encoder: ({ body, model }) => new ChatStreamEncoder(idsFor(model.id), body.stream_options?.include_usage === true),
};
