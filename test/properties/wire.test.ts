// Property-based tests, part two: what surrounds the fields — the bytes of JSON
// bodies (encoding, depth, size, content type), malformed HTTP and callers that leave mid-body,
// credentials, version headers, query strings, path ids and the admin API. Every request: never
// a 5xx, the spec's error body saying what is wrong; per property, no money moves.
import { describeProperties } from './harness.js';
import { headerQueryProperties } from './headers-query.js';
import { rawBodyProperties } from './raw-bodies.js';

describeProperties('wire', {
  'raw bodies and HTTP': rawBodyProperties,
  'headers, queries, ids and admin': headerQueryProperties,
});
