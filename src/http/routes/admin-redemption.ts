// The operator's redemption batches: making one (its codes answered this once) and the list with
// how many of each were redeemed. Registered by admin.ts, behind the admin token.
import type { FastifyPluginAsync } from 'fastify';
import { invalidRequest } from '../../errors.js';
import type { Store } from '../../store/open.js';
import { listRedemptionBatches } from '../../store/redemption-codes.js';
import { createRedemptionBatch } from '../../topups/redemption.js';
import { redemptionBatchView } from '../../topups/topup-views.js';
import { readLimit } from '../schemas/query.js';
import { CreateRedemptionBatchSchema, ListRedemptionBatchesSchema } from '../schemas/topups.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

interface NewBatchBody {
  amount_micros: number;
  count: number;
  expires_at?: string;
  name?: string;
}

/** `expires_at` as epoch ms; the schema's format check passes a few forms Date.parse cannot read. */
function readExpiry(text: string | undefined): number | null {
  if (text === undefined) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw invalidRequest('expires_at: must be a date-time such as 2030-01-01T00:00:00Z');
  return ms;
}

export const adminRedemptionRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  app.post('/admin/redemption-batches', {
    schema: CreateRedemptionBatchSchema,
    ...serializedAsBuilt,
    handler: async (request, reply) => {
      const body = request.body as NewBatchBody;
      const { batch, codes } = await createRedemptionBatch(store, {
        amountMicros: body.amount_micros,
        count: body.count,
        expiresAt: readExpiry(body.expires_at),
        name: body.name ?? null,
      });
      // The codes exist nowhere else: never cached, never logged (request lines carry no bodies).
      reply.code(201).header('cache-control', 'no-store');
      return { ...redemptionBatchView(batch), codes };
    },
  });

  app.get('/admin/redemption-batches', { schema: ListRedemptionBatchesSchema, ...serializedAsBuilt }, async (request) => ({
    data: (await listRedemptionBatches(store.db, { limit: readLimit(request.query) ?? 100 })).map(redemptionBatchView),
  }));
};
