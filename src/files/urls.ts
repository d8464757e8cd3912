// The URLs the gateway gives its uploads, and whether a URL is exactly one of them.
const FILE_ID = /^file_[0-9a-f]{32}$/;
const URL_NAME = /^(?!\.+$)[A-Za-z0-9._-]{1,200}$/;
const OWN_FILE_PATH = /^\/files\/(file_[0-9a-f]{32})\/([^/]+)$/;

export const isFileId = (id: string) => FILE_ID.test(id);

/**
 * The file name as it appears in the URL: letters, digits, `.`, `_` and `-` only, so the URL needs
 * no escaping, and never `.` or `..` (a dot segment would turn the URL into another path).
 */
export function urlFileName(filename: string): string {
  const name = filename.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 200);
  return URL_NAME.test(name) ? name : 'file';
}

export function fileUrl(publicUrl: string, file: { id: string; filename: string }): string {
  return `${publicUrl}/files/${file.id}/${urlFileName(file.filename)}`;
}

/**
 * The file id when `url` (already parsed, so dot segments are resolved) is exactly the address of
 * one of this gateway's uploads: its public origin and path, `/files/<id>/<name>`, no query. Any
 * other form, an escaped character included, is not one (and gets the ordinary URL policy).
 */
export function ownFileId(url: URL, publicUrl: string): string | undefined {
  const base = new URL(publicUrl);
  if (url.origin !== base.origin || url.search !== '' || url.username !== '' || url.password !== '') return undefined;
  const prefix = base.pathname.replace(/\/+$/, '');
  if (!url.pathname.startsWith(`${prefix}/`)) return undefined;
  const match = OWN_FILE_PATH.exec(url.pathname.slice(prefix.length));
  if (!match || !URL_NAME.test(match[2] ?? '')) return undefined;
  return match[1];
}
