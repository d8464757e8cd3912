// How the account's gallery (GET /v1/account/gallery) shows a succeeded image, video or erase
// task: the media its result names, and for an erased video the original it was made from. The
// URLs are the upstream's own, as the task's GET answers them; the gateway does not copy media.
import { iso } from '../admin/views.js';
import { isWebUrl } from '../net/web-url.js';
import type { GalleryRow, MediaTaskKind } from '../store/tasks.js';

export interface GalleryMedia {
  type: 'image' | 'video';
  url: string;
  /** A still of the video (its last frame) when the upstream gave one; null otherwise. */
  poster_url: string | null;
}

export interface GalleryItem {
  id: string;
  kind: MediaTaskKind;
  model: string;
  created_at: string;
  finished_at: string | null;
  media: GalleryMedia[];
  /** The video an erase task cleaned, to show beside the result; null for other kinds. */
  original: { task_id: string; type: 'video'; url: string } | null;
}

// The fields the kinds' handlers write into `result` (tasks/kinds/*.ts); each is checked before use,
// since a result written by an older gateway may lack one.
interface StoredResult {
  data?: { url?: unknown }[];
  video_url?: unknown;
  last_frame_url?: unknown;
  original_video_url?: unknown;
  source_task_id?: unknown;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
/** A media link: http(s) only, whatever the upstream wrote (a `javascript:` URL is never a link here). */
const webUrl = (value: unknown): string | null => (isWebUrl(value) ? value : null);

function mediaOf(kind: MediaTaskKind, result: StoredResult): GalleryMedia[] {
  if (kind === 'image') {
    // Images answered inline (b64_json) have no URL: they stay with the task's own GET.
    const urls = (Array.isArray(result.data) ? result.data : []).map((image) => webUrl(image?.url));
    return urls.filter((url) => url !== null).map((url) => ({ type: 'image', url, poster_url: null }));
  }
  const url = webUrl(result.video_url);
  return url === null ? [] : [{ type: 'video', url, poster_url: webUrl(result.last_frame_url) }];
}

export function galleryView(row: GalleryRow): GalleryItem {
  const kind = row.kind as MediaTaskKind;
  // No result here means one too large to list (listAccountGallery leaves those in the store).
  const result = (row.result === null ? {} : JSON.parse(row.result)) as StoredResult;
  const originalUrl = webUrl(result.original_video_url);
  const sourceTaskId = text(result.source_task_id);
  return {
    id: row.id,
    kind,
    model: row.model,
    created_at: iso(row.created_at),
    finished_at: row.finished_at === null ? null : iso(row.finished_at),
    media: mediaOf(kind, result),
    original: kind === 'erase' && originalUrl !== null && sourceTaskId !== null ? { task_id: sourceTaskId, type: 'video', url: originalUrl } : null,
  };
}
