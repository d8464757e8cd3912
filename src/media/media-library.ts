// music-metadata, the library that reads a recording's or a video's header, loaded on first use:
// most processes never read one, and loading it takes about a tenth of a second at start-up.
export const loadMediaLibrary = () => import('music-metadata');
