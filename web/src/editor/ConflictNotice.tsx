export interface Conflict {
  baseVersion: number;
  currentVersion: number;
  currentText: string;
}

interface Props {
  path: string;
  conflict: Conflict;
  onLoadCurrent: () => void;
  onOverwrite: () => void;
}

/**
 * A save refused because someone else saved first (409 on base_version). Nothing was written:
 * the user sees what is on the server now and chooses, explicitly, to take it or to replace it.
 */
export function ConflictNotice({ path, conflict, onLoadCurrent, onOverwrite }: Props) {
  return (
    <section role="alert" class="conflict" aria-label="Save conflict">
      <h3>Not saved: {path} was changed by someone else</h3>
      <p>
        You were editing version {conflict.baseVersion}; the server now has version {conflict.currentVersion}. Your text is still in
        the editor.
      </p>
      <pre aria-label="Current content on the server" tabIndex={0}>{conflict.currentText}</pre>
      <div class="actions">
        <button type="button" onClick={onLoadCurrent}>Discard my changes and load version {conflict.currentVersion}</button>
        <button type="button" class="danger" onClick={onOverwrite}>Replace version {conflict.currentVersion} with my text</button>
      </div>
    </section>
  );
}
