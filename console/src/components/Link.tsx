// An ordinary link (it opens in a new tab, shows its address) that changes page without a reload.
import type { ComponentChildren } from 'preact';
import { navigate, pathOf, type Route } from '../router';

export function Link({ to, current, children }: { to: Route; current?: boolean; children: ComponentChildren }) {
  const follow = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={pathOf(to)} onClick={follow} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}
