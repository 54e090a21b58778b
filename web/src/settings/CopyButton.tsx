import { useState } from 'preact/hooks';
import type { RefObject } from 'preact';

interface Props {
  text: string;
  /** The element showing `text`: selected when the clipboard cannot be written, so Ctrl+C copies it. */
  target: RefObject<HTMLElement | null>;
  /** The button's accessible name, e.g. "Copy the key". */
  label: string;
}

/**
 * Copies `text` with the Clipboard API. Where it is missing or refused (a plain-http address is
 * not a secure context), the text is selected and copied the old way, or left selected for the
 * user; the outcome is announced.
 */
export function CopyButton({ text, target, label }: Props) {
  const [note, setNote] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setNote('Copied.');
    } catch {
      setNote(selectAndCopy(target.current) ? 'Copied.' : 'The text is selected: press Ctrl+C (⌘C on a Mac) to copy it.');
    }
  };
  return (
    <span class="copy">
      <button type="button" aria-label={label} onClick={() => void copy()}>
        Copy
      </button>
      <span role="status" class="muted">
        {note}
      </span>
    </span>
  );
}

function selectAndCopy(element: HTMLElement | null): boolean {
  if (!element) return false;
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
  try {
    // Deprecated, but the only way to copy outside a secure context; it fails quietly where refused.
    return document.execCommand('copy');
  } catch {
    return false;
  }
}
