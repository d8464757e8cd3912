// Copies a secret. Where the clipboard is not available (plain http on another host), the text is
// selected instead so that Ctrl+C copies it.
import { useState } from 'preact/hooks';

export function CopyButton({ text, label, field }: { text: string; label: string; field?: () => HTMLInputElement | null }) {
  const [said, setSaid] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied');
    } catch {
      field?.()?.select();
      setSaid('Selected: press Ctrl+C to copy');
    }
  };
  return (
    <>
      <button type="button" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span class="status" role="status">
        {said}
      </span>
    </>
  );
}
