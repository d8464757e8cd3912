// Newer and Older buttons under a paged table, off while a page loads or when there is none.
import type { Pages } from '../use-pages';

export function Pager({ pages, label }: { pages: Pages<unknown>; label: string }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={!pages.newer} onClick={pages.newer}>
        Newer
      </button>
      <span>Page {pages.number}</span>
      <button type="button" disabled={!pages.older} onClick={pages.older}>
        Older
      </button>
    </nav>
  );
}
