// The legacy completions (plain and streamed, on OpenAI's and Azure's paths), moderations and rerank
// families: one upstream call each, passed through. A completion stream breaks as chat's does (a
// `data:` error object) and a caller who leaves it pays the prompt and the text delivered; every
// other fault costs nothing.
import assert from 'node:assert/strict';
import { promptCounting } from '../../../src/billing/estimates.js';
import { valueTokens } from '../../../src/billing/prompt-tokens.js';
import { DEFAULT_TOKENIZER } from '../../../src/billing/tokens.js';
import { postJson, waitFor } from './calls.js';
import { MAX_TOKENS } from './chat-families.js';
import type { Family } from './matrix.js';
import { syncFamily } from './sync-families.js';

const PROMPT = '[[words:12]] fault matrix';
/** The prompt as the gateway counts it for the hold (routes/completions.ts). */
const PROMPT_TOKENS = valueTokens(
  PROMPT,
  promptCounting({ id: 'sandbox-chat', config: { tokenizer: DEFAULT_TOKENIZER, image_input_tokens: 1_600, max_output_tokens: 4_096 } }),
);
const completion = (model: string, stream: boolean) => ({ model, prompt: PROMPT, max_tokens: MAX_TOKENS, stream });

/** A completion stream the caller left: the prompt as the gateway counted it, the output delivered, never the cap. */
const promptAndDelivered = (units: Record<string, number>) => {
  assert.equal(units.input_token, PROMPT_TOKENS, `billed ${JSON.stringify(units)}`);
  assert.ok((units.output_token ?? 0) >= 0 && (units.output_token ?? 0) <= MAX_TOKENS, `billed ${JSON.stringify(units)}`);
};

/**
 * A family whose model is priced at 0 (moderations): its hold of 0 leaves the account's held funds
 * at 0 all along, so the money check cannot tell by them that the hold ended; the cell waits for the
 * hold's end in the ledger itself (a caller who left is answered before the upstream fails).
 */
function endsFreeHold(family: Family): Family {
  return {
    ...family,
    async run(ctx, prepared) {
      const rule = await family.run(ctx, prepared);
      await waitFor(
        async () => {
          const rows = (await ctx.gw.admin('GET', `/admin/accounts/${ctx.accountId}/ledger?limit=100`)).body.data as { kind: string }[];
          return rows.some((row) => row.kind === 'release' || row.kind === 'settle');
        },
        { timeoutMs: 15_000 },
      );
      return rule;
    },
  };
}

export const COMPLETIONS_FAMILIES: Family[] = [
  syncFamily({ name: 'completions', kind: 'completions', send: (gw) => postJson(gw, '/v1/completions', completion('sandbox-chat', false)) }),
  syncFamily({
    name: 'completions, stream',
    kind: 'completions',
    protocol: 'chat',
    leftBill: promptAndDelivered,
    send: (gw) => postJson(gw, '/v1/completions', completion('sandbox-chat', true)),
  }),
  syncFamily({ name: 'completions on Azure', kind: 'azure', send: (gw) => postJson(gw, '/v1/completions', completion('sandbox-azure', false)) }),
  syncFamily({
    name: 'completions on Azure, stream',
    kind: 'azure',
    protocol: 'chat',
    leftBill: promptAndDelivered,
    send: (gw) => postJson(gw, '/v1/completions', completion('sandbox-azure', true)),
  }),
  endsFreeHold(
    syncFamily({
      name: 'moderations',
      kind: 'moderations',
      send: (gw) => postJson(gw, '/v1/moderations', { model: 'sandbox-moderation', input: ['fault matrix', 'moderations'] }),
    }),
  ),
  syncFamily({
    name: 'rerank',
    kind: 'rerank',
    send: (gw) => postJson(gw, '/v1/rerank', { model: 'sandbox-rerank', query: 'fault matrix', documents: ['a fault', 'a matrix', 'neither'], top_n: 2 }),
  }),
];
