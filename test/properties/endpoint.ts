// A JSON endpoint under test: its valid bodies, and the mutations of one field that make it invalid.
import fc from 'fast-check';
import { jsonHeaders, type Probe, probe } from './harness.js';
import { type FieldMutation, showPath, toJson, withField } from './values.js';

export interface JsonEndpoint {
  name: string;
  /** Paths that share the body (the ARK prefixes); one is picked per request. */
  paths: readonly string[];
  /** Headers beside the key and content type (the messages version). */
  headers?: Record<string, string>;
  /** Valid bodies: each mutation applies to one of them. */
  bases: readonly unknown[];
  mutations: fc.Arbitrary<FieldMutation>;
}

/** A probe: a valid base with exactly one field made invalid. */
export function fieldProbes(endpoint: JsonEndpoint, key: string): fc.Arbitrary<Probe> {
  return fc.tuple(fc.constantFrom(...endpoint.paths), fc.constantFrom(...endpoint.bases), endpoint.mutations).map(([path, base, mutation]) =>
    probe({
      label: `${endpoint.name} ${showPath(mutation.path)}`,
      method: 'POST',
      path,
      headers: jsonHeaders(key, endpoint.headers),
      body: toJson(withField(base, mutation.path, mutation.value)),
      expect: { names: mutation.names, exact: mutation.exact },
    }),
  );
}
