// The images calls answered at once: generations (JSON) and edits (a multipart form with an image).
// Each is one JSON answer from one upstream call: every fault before it ends in a 502 (a 400 for the
// upstream's 4xx) with the hold released, whether the caller waits or leaves.
import { FormData } from 'undici';
import { PNG_BYTES } from '../../../src/sandbox/media.js';
import type { TestGateway } from '../../helpers/gateway.js';
import { postForm, postJson } from './calls.js';
import type { Family } from './matrix.js';
import { syncFamily } from './sync-families.js';

const edit = (gw: TestGateway) =>
  postForm(gw, '/v1/images/edits', () => {
    const form = new FormData();
    form.append('model', 'sandbox-image');
    form.append('prompt', 'fault matrix');
    form.append('image', new Blob([new Uint8Array(PNG_BYTES)], { type: 'image/png' }), 'gate.png');
    return form;
  });

export const IMAGES_SYNC_FAMILIES: Family[] = [
  syncFamily({
    name: 'images generations',
    kind: 'images',
    send: (gw) => postJson(gw, '/v1/images/generations', { model: 'sandbox-image', prompt: 'fault matrix', n: 2 }),
  }),
  syncFamily({ name: 'images edits', kind: 'image-edits', send: edit }),
];
