// file_url on task requests. Parsed and normalised before anything else (url-policy.ts
// parseUserUrl), then one of two things: exactly the address of one of this gateway's live
// uploads, which it serves wherever it runs (loopback included), or a URL the ordinary policy
// allows. A prefix is never enough: `/files/../metrics` is the `/metrics` it resolves to.
import { invalidRequest } from '../errors.js';
import { ownFileId } from '../files/urls.js';
import { parseUserUrl } from '../net/url-policy.js';
import { findFile } from '../store/files.js';
import type { Store } from '../store/open.js';
import { requireSafeUrl } from './task-handler.js';

/** The URL to hand the upstream (normalised), or a 400 naming the field. */
export async function checkedFileUrl(deps: { store: Store; publicUrl: string; allowPrivateUrls: boolean }, raw: string, field = 'file_url'): Promise<string> {
  const parsed = parseUserUrl(raw, field);
  if ('problem' in parsed) throw invalidRequest(parsed.problem);
  const ownId = ownFileId(parsed.url, deps.publicUrl);
  if (ownId === undefined) await requireSafeUrl(parsed.url.href, field, deps.allowPrivateUrls);
  else if (!(await findFile(deps.store.db, { id: ownId, now: Date.now() }))) throw invalidRequest(`${field}: no such file (deleted or expired)`);
  return parsed.url.href;
}
