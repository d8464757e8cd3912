// `data:<media type>;base64,<data>` URLs, the form chat completions and the responses API carry
// inline images and files in; other formats carry the media type and the bytes apart.

const DATA_URL = /^data:([^;,]+);base64,/;

/** The media type and base64 data of a data URL; undefined for any other URL. */
export function partOfDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = DATA_URL.exec(url);
  return match ? { mediaType: match[1] as string, data: url.slice(match[0].length) } : undefined;
}
