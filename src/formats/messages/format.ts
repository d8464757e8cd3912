// Messages as an inbound format of the pivot (pipeline/pivot-call.ts).
import type { InboundFormat } from '../../pipeline/pivot-call.js';
import { randomHex } from '../../store/ids.js';
import type { MessagesRequest } from '../../upstreams/anthropic/types.js';
import { MessagesStreamEncoder, messageOf } from './from-pivot.js';
import { pivotRequestOfMessages } from './to-pivot.js';

export const messageId = () => `msg_${randomHex(12)}`;

export const messagesFormat: InboundFormat<MessagesRequest> = {
  toPivot: (body, upstreamModel) => pivotRequestOfMessages(body, { upstreamModel }),
  answer: (response, { model }) => messageOf(response, { id: messageId(), model: model.id }),
  encoder: ({ model, estimate }) => new MessagesStreamEncoder({ id: messageId(), model: model.id, inputTokens: estimate.input_token ?? 0 }),
};
