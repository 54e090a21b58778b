import { useEffect, useRef } from 'preact/hooks';
import { CopyButton } from './CopyButton.tsx';

/**
 * A key just created, the only time the service answers it: shown with Copy and a warning.
 * It lives only in this component's props: Done, closing the panel or a reload forgets it.
 */
export function NewKey({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const code = useRef<HTMLElement>(null);
  const box = useRef<HTMLDivElement>(null);
  // Screen readers land on the key and its warning at once.
  useEffect(() => box.current?.focus(), [secret]);
  return (
    <div class="once" role="group" aria-labelledby="settings-new-key" tabIndex={-1} ref={box}>
      <h4 id="settings-new-key">New key “{name}”</h4>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Send it as <code>Authorization: Bearer …</code>.
      </p>
      <code class="secret" ref={code}>
        {secret}
      </code>
      <div class="actions">
        <CopyButton text={secret} target={code} label="Copy the new key" />
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
