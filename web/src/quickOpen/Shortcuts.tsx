import { SHORTCUTS } from './commands.ts';
import { ModalDialog } from './Dialog.tsx';

/** The `?` dialog: every keyboard shortcut. */
export function Shortcuts({ onClose }: { onClose: () => void }) {
  return (
    <ModalDialog label="Keyboard shortcuts" class="shortcuts" onClose={onClose}>
      <h2>Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <div key={keys}>
            <dt><kbd>{keys}</kbd></dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" autoFocus onClick={onClose}>Close</button>
    </ModalDialog>
  );
}
