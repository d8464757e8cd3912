// Property-based tests, part one: one field of a valid request made invalid —
// JSON bodies of the synchronous endpoints, task submissions, multipart parts and WAV headers.
// Every request: never a 5xx, the spec's error body naming the field; per property, the account's
// ledger holds only its opening credit. Replay a failure with PROPS_SEED=<seed>.
import { describeProperties } from './harness.js';
import { jsonFieldProperties } from './json-fields.js';
import { multipartProperties } from './multipart.js';
import { taskFieldProperties } from './task-fields.js';

describeProperties('fields', {
  'JSON body fields': jsonFieldProperties,
  'task submission fields': taskFieldProperties,
  'multipart uploads': multipartProperties,
});
