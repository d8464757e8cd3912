// The operator's prices (docs/prices.md): price plans, which plan an account is on, and price
// changes with their history. Each write raises the price book's version (store/price-book.ts);
// this instance reads it again at once, every other within `prices.refresh_ms`.
import type { FastifyPluginAsync } from 'fastify';
import { multiplierText, parseMultiplier } from '../../billing/price-book.js';
import { type Price, PriceSchema } from '../../config/schema.js';
import { conflict, invalidRequest, notFound } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { newId } from '../../store/ids.js';
import type { Store } from '../../store/open.js';
import {
  assignPlan,
  countAccountsByPlan,
  countAccountsOnPlan,
  deletePlan,
  findPlan,
  insertPriceChange,
  listPlans,
  listPriceChanges,
  type PlanRow,
  type PriceChangeRow,
  upsertPlan,
} from '../../store/price-book.js';
import { AssignPlanSchema, CreatePriceChangeSchema, DeletePlanSchema, ListPlansSchema, ListPriceChangesSchema, PutPlanSchema } from '../schemas/prices.js';

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

/** A price list as the admin API took it, checked as tollroute.yaml's are (tiers by rising size), the field named. */
function priceOf(value: unknown, field: string): Price {
  const parsed = PriceSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidRequest(`${[field, ...issue.path].join('.')}: ${issue.message}`);
}

function planView(row: PlanRow, accounts: number) {
  return {
    name: row.name,
    multiplier: row.multiplier_ppm === null ? null : multiplierText(Number(row.multiplier_ppm)),
    models: Object.fromEntries(Object.entries(JSON.parse(row.model_multipliers ?? '{}') as Record<string, number>).map(([m, ppm]) => [m, multiplierText(ppm)])),
    prices: JSON.parse(row.prices ?? '{}') as Record<string, Price>,
    accounts,
    updated_at: iso(row.updated_at),
  };
}

const changeView = (row: PriceChangeRow) => ({
  id: row.id,
  model: row.model,
  price: JSON.parse(row.price) as Price,
  effective_at: iso(row.effective_at),
  created_at: iso(row.created_at),
  note: row.note,
});

export const adminPriceRoutes: FastifyPluginAsync<{ store: Store; pipeline: Pipeline }> = async (app, { store, pipeline }) => {
  const db = store.db;
  const requireModel = (model: string, field: string) => {
    if (!pipeline.catalogue.list().some((m) => m.id === model)) throw invalidRequest(`${field}: no model named ${model} in the catalogue`);
  };

  app.post('/admin/plans', { schema: PutPlanSchema }, async (request) => {
    const body = request.body as { name: string; multiplier?: unknown; models?: Record<string, unknown>; prices?: Record<string, unknown> };
    const models: Record<string, number> = {};
    for (const [model, multiplier] of Object.entries(body.models ?? {})) {
      requireModel(model, `models.${model}`);
      models[model] = parseMultiplier(multiplier, `models.${model}`);
    }
    const prices: Record<string, Price> = {};
    for (const [model, price] of Object.entries(body.prices ?? {})) {
      requireModel(model, `prices.${model}`);
      prices[model] = priceOf(price, `prices.${model}`);
    }
    const row: PlanRow = {
      name: body.name,
      multiplier_ppm: body.multiplier === undefined ? null : parseMultiplier(body.multiplier, 'multiplier'),
      model_multipliers: JSON.stringify(models),
      prices: JSON.stringify(prices),
      updated_at: Date.now(),
    };
    await upsertPlan(db, row);
    await pipeline.prices.refresh(true);
    return planView(row, await countAccountsOnPlan(db, body.name));
  });

  app.get('/admin/plans', { schema: ListPlansSchema }, async () => {
    const [plans, accounts] = await Promise.all([listPlans(db), countAccountsByPlan(db)]);
    return { data: plans.map((row) => planView(row, accounts.get(row.name) ?? 0)) };
  });

  app.delete('/admin/plans/:name', { schema: DeletePlanSchema }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const accounts = await countAccountsOnPlan(db, name);
    if (accounts > 0) throw conflict(`plan ${name} has ${accounts} account(s) on it: put them on another plan first`);
    if (!(await deletePlan(db, name))) throw notFound(`no plan named ${name}`);
    await pipeline.prices.refresh(true);
    return reply.code(204).send();
  });

  app.put('/admin/accounts/:id/plan', { schema: AssignPlanSchema }, async (request) => {
    const { id } = request.params as { id: string };
    const { plan } = request.body as { plan: string | null };
    if (plan !== null && !(await findPlan(db, plan))) throw notFound(`no plan named ${plan}`);
    if (!(await assignPlan(db, id, plan))) throw notFound(`account ${id} not found`);
    await pipeline.prices.refresh(true);
    return { account_id: id, plan };
  });

  app.post('/admin/price-changes', { schema: CreatePriceChangeSchema }, async (request, reply) => {
    const body = request.body as { model: string; price: unknown; effective_at?: string; note?: string };
    requireModel(body.model, 'model');
    const now = Date.now();
    const effectiveAt = body.effective_at === undefined ? now : Date.parse(body.effective_at);
    if (!Number.isFinite(effectiveAt)) throw invalidRequest('effective_at: expected an ISO 8601 time');
    const row: PriceChangeRow = {
      id: newId('pc'),
      model: body.model,
      price: JSON.stringify(priceOf(body.price, 'price')),
      effective_at: effectiveAt,
      created_at: now,
      note: body.note ?? null,
    };
    await insertPriceChange(db, row);
    await pipeline.prices.refresh(true);
    return reply.code(201).send(changeView(row));
  });

  app.get('/admin/price-changes', { schema: ListPriceChangesSchema }, async (request) => {
    const { model } = request.query as { model?: string };
    return { data: (await listPriceChanges(db, model)).map(changeView) };
  });
};
