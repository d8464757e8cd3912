// The embeddings calls: one JSON answer from one upstream call on each kind of channel that serves
// them (OpenAI passed through, Azure's deployment path, Gemini's batchEmbedContents translated).
// Every fault ends in a 502 (a 400 for the upstream's 4xx) with the hold released, whether the
// caller waits or leaves.
import { postJson } from './calls.js';
import type { Family } from './matrix.js';
import { syncFamily } from './sync-families.js';

const embed = (model: string) => ({ model, input: ['fault matrix', 'embeddings'] });

export const EMBEDDINGS_FAMILIES: Family[] = [
  syncFamily({ name: 'embeddings', kind: 'embeddings', send: (gw) => postJson(gw, '/v1/embeddings', embed('sandbox-embedding')) }),
  syncFamily({ name: 'embeddings, Azure', kind: 'azure', send: (gw) => postJson(gw, '/v1/embeddings', embed('sandbox-embedding-azure')) }),
  syncFamily({ name: 'embeddings, Gemini', kind: 'gemini', send: (gw) => postJson(gw, '/v1/embeddings', embed('sandbox-embedding-gemini')) }),
];
