import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ChatProps } from './ChatPanel.tsx';

/**
 * The chat panel, fetched the first time it is opened (a dynamic import, so the first load of the
 * dashboard stays small). Once loaded it stays mounted while hidden, so closing and reopening it
 * keeps the conversation (and a running answer).
 */
export function LazyChat({ open, ...props }: ChatProps & { open: boolean }) {
  const [Panel, setPanel] = useState<ComponentType<ChatProps> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!open || Panel) return;
    setError(null);
    import('./ChatPanel.tsx').then(
      (m) => setPanel(() => m.ChatPanel),
      (err: Error) => setError(`The chat could not be loaded: ${err.message}`),
    );
  }, [open]);
  if (!Panel) {
    if (!open) return null;
    return error ? <p role="alert" class="error">{error}</p> : <p aria-busy="true">Loading the chat…</p>;
  }
  return (
    <div hidden={!open}>
      <Panel {...props} />
    </div>
  );
}
