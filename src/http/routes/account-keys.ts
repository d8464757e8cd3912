// The account's keys on the account API: list with limits and spend, issue, change limits, revoke.
// A key that carries limits, its own rpm included (or a console session signed in with one), may not
// issue or change keys, nor revoke a key without limits: it could otherwise make itself an
// unlimited one, or lock its account's unlimited keys out. Its holder uses a key without limits,
// or the operator's sign-in link.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { type KeyLimitsBody, keyLimitColumns } from '../../account/key-limits-input.js';
import { keyViewsWithSpend } from '../../account/key-views.js';
import { issueApiKey } from '../../billing/api-keys.js';
import { callerHasLimits, keyHasLimits } from '../../billing/key-limits.js';
import { forbidden, notFound } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { Caller } from '../../pipeline/types.js';
import { type AccountKeyRow, listAccountKeys, revokeApiKey, updateApiKey } from '../../store/api-keys.js';
import { resetKeySpend } from '../../store/key-spend.js';
import type { Store } from '../../store/open.js';
import { requireCaller } from '../auth.js';
import type { KeyResolver } from '../key-resolver.js';
import { CreateKeySchema, ListKeysSchema, RevokeKeySchema, UpdateKeySchema } from '../schemas/account-keys.js';

export interface AccountKeyRouteDeps {
  store: Store;
  pipeline: Pipeline;
  keys: KeyResolver;
}

const LIMITED = 'this API key has limits (its rpm included), so it may not issue or change keys; use a key without limits';

export const accountKeyRoutes: FastifyPluginAsync<AccountKeyRouteDeps> = async (app, { store, pipeline, keys }) => {
  const db = store.db;

  const keyViews = (rows: AccountKeyRow[]) => keyViewsWithSpend(db, rows);

  /** The caller, when it may manage keys; and the rules a key's limits are checked by. */
  function keyManager(request: FastifyRequest): { caller: Caller; rules: Parameters<typeof keyLimitColumns>[1] } {
    const caller = requireCaller(request);
    if (callerHasLimits(caller)) throw forbidden(LIMITED);
    const knownModels = new Set(pipeline.catalogue.list().map((model) => model.id));
    // The caller has no rpm of its own (that is a limit): it runs at the default, and gives no more.
    return { caller, rules: { knownModels, maxRpm: pipeline.defaultRpm, now: Date.now() } };
  }

  app.get('/v1/account/keys', { schema: ListKeysSchema }, async (request) => {
    return { data: await keyViews(await listAccountKeys(db, { accountId: requireCaller(request).accountId })) };
  });

  app.post('/v1/account/keys', { schema: CreateKeySchema }, async (request, reply) => {
    const { caller, rules } = keyManager(request);
    const { name, ...limits } = request.body as { name: string } & KeyLimitsBody;
    // Only a caller without limits gets here (a key the operator slowed down may not issue keys at
    // all, so none can be faster than it): a new key without an rpm runs at the default, as its creator does.
    const columns = keyLimitColumns(limits, rules);
    // A test key's account is a test twin, and a twin's keys are all test keys (docs/api.md "Test mode").
    const { key, row } = await issueApiKey(store, { accountId: caller.accountId, name, limits: columns, test: !caller.livemode });
    reply.code(201).header('cache-control', 'no-store');
    const [view] = await keyViews([{ ...row, last_used_at: null }]);
    return { ...view, key };
  });

  app.patch('/v1/account/keys/:id', { schema: UpdateKeySchema }, async (request) => {
    const { caller, rules } = keyManager(request);
    const { id } = request.params as { id: string };
    const { name, ...limits } = request.body as { name?: string } & KeyLimitsBody;
    const [before] = await listAccountKeys(db, { accountId: caller.accountId, keyId: id });
    if (!before) throw notFound(`key ${id} not found`);
    const set = { ...keyLimitColumns(limits, rules), ...(name !== undefined && { name }) };
    const after = await updateApiKey(db, { keyId: id, accountId: caller.accountId, set });
    if (!after) throw notFound(`key ${id} not found`);
    // A cap set where there was none starts counting afresh from the key's usage (key-spend.ts).
    const capAdded =
      (before.daily_cap_micros === null && after.daily_cap_micros !== null) || (before.monthly_cap_micros === null && after.monthly_cap_micros !== null);
    if (capAdded) await resetKeySpend(db, id);
    // This instance serves the new limits from the next request; others within a second (key-resolver.ts).
    keys.refreshKey(id);
    return (await keyViews([after]))[0];
  });

  app.delete('/v1/account/keys/:id', { schema: RevokeKeySchema }, async (request) => {
    const caller = requireCaller(request);
    const { accountId } = caller;
    const { id } = request.params as { id: string };
    // A limited key may revoke itself or another limited key, never one without limits: a leaked
    // limited key could otherwise lock its account out of every key it has.
    const [target] = await listAccountKeys(db, { accountId, keyId: id });
    if (!target) throw notFound(`key ${id} not found`);
    if (callerHasLimits(caller) && !keyHasLimits(target))
      throw forbidden(`this API key has limits (its rpm included), so it may not revoke key ${id}, which has none; use a key without limits`);
    // The key this very request came with may be revoked too: it is how a holder stops a leaked key
    // at once, and nothing is lost that the operator cannot give back (a new key). This answer
    // still goes out; the key's next request is refused.
    await revokeApiKey(db, { keyId: id, accountId, now: Date.now() });
    const [key] = await listAccountKeys(db, { accountId, keyId: id });
    if (!key) throw notFound(`key ${id} not found`);
    // Refused from memory at once here, as the admin revocation does; other instances stop serving
    // it from their caches within a second (key-resolver.ts). Console sessions signed in with it
    // are refused from their next request on (they read the key's state with the session).
    keys.forgetKey(id);
    return (await keyViews([key]))[0];
  });
};
