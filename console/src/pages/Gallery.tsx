// The media the account generated: each succeeded image task's pictures as thumbnails, each video
// as a player, and an erased video beside the original it was made from, newest first, in pages.
// The files stay where the upstream keeps them; the page shows them from there.
import { useState } from 'preact/hooks';
import type { GalleryItem } from '../api';
import { Choice } from '../components/Choice';
import { Failure } from '../components/Notice';
import { Pager } from '../components/Pager';
import { formatTime } from '../format';
import { usePages } from '../use-pages';
// The gallery's own rules, beside the shared sheet (styles.css); Vite bundles both into one file.
import '../gallery.css';

const KINDS = ['image', 'video', 'erase'] as const;
// Fewer than the tables' 50: every player on a page fetches its video's first bytes.
const TILES_PER_PAGE = 24;

type Media = GalleryItem['media'][number];

/** A thumbnail that opens the full image in a new tab, or a player that loads only its metadata until played. */
function MediaView({ media, label }: { media: Pick<Media, 'type' | 'url'> & { poster_url?: string | null }; label: string }) {
  if (media.type === 'image') {
    return (
      <a href={media.url} target="_blank" rel="noreferrer" aria-label={`${label} (opens full size)`}>
        <img src={media.url} alt={label} loading="lazy" width={320} height={320} />
      </a>
    );
  }
  // biome-ignore lint/a11y/useMediaCaption: generated videos come with no caption track to offer.
  return <video src={media.url} poster={media.poster_url ?? undefined} controls preload="metadata" aria-label={label} />;
}

function Tile({ item }: { item: GalleryItem }) {
  const { original } = item;
  const erased = item.media[0];
  return (
    <li class={original ? 'tile pair' : 'tile'} data-task-id={item.id}>
      {original && erased ? (
        <div class="side-by-side">
          <figure>
            <MediaView media={original} label={`Original video of ${item.id}`} />
            <figcaption>Original</figcaption>
          </figure>
          <figure>
            <MediaView media={erased} label={`Video of ${item.id} with subtitles erased`} />
            <figcaption>Subtitles erased</figcaption>
          </figure>
        </div>
      ) : (
        <div class={item.media.length > 1 ? 'media several' : 'media'}>
          {item.media.map((media, index) => (
            <MediaView
              key={media.url}
              media={media}
              label={media.type === 'image' ? `Image ${index + 1} of ${item.media.length} from ${item.id}` : `Video of ${item.id}`}
            />
          ))}
        </div>
      )}
      {item.media.length === 0 && <p class="no-preview">No preview: these images came back inline (b64_json); the task’s own GET has them.</p>}
      <p class="meta">
        <span>
          {item.kind === 'erase' ? 'subtitles erased' : item.kind} · {item.model}
        </span>
        <span>{formatTime(item.finished_at ?? item.created_at)}</span>
        <code>{item.id}</code>
      </p>
    </li>
  );
}

export function Gallery() {
  const [kind, setKind] = useState('');
  const pages = usePages<GalleryItem>('/v1/account/gallery', { kind }, { rows: TILES_PER_PAGE });
  const { page, error, loading } = pages;
  return (
    <>
      <h1>Gallery</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice id="gallery-kind" label="Kind" options={KINDS} value={kind} onChange={setKind} />
      </form>
      <Failure message={error} />
      {page && (
        <>
          <div class="gallery-page" aria-busy={loading}>
            {page.data.length > 0 ? (
              <ul class="gallery" aria-label="Generated media">
                {page.data.map((item) => (
                  <Tile key={item.id} item={item} />
                ))}
              </ul>
            ) : (
              <p>
                {kind === '' ? 'Nothing here yet: the images and videos your tasks make appear here once they succeed.' : `No ${kind} task has succeeded yet.`}
              </p>
            )}
          </div>
          <Pager pages={pages} label="Gallery pages" />
        </>
      )}
    </>
  );
}
