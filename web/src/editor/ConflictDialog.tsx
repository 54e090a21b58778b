import { useEffect, useRef } from 'preact/hooks';
import type { Merge } from './merge.ts';

export interface Conflict {
  /** The version the refused text was based on, and the version the server has now. */
  baseVersion: number;
  theirVersion: number;
  theirText: string;
  /** Their content as the API gave it (a JSON value, or Markdown text). */
  theirContent: unknown;
  /** The text that was refused (what the user tried to save). */
  mine: string;
  /** Base, theirs and mine merged three ways; null when the base version could not be read. */
  merge: Merge | null;
}

interface Props {
  path: string;
  conflict: Conflict;
  busy: boolean;
  /** Why the last choice made here failed (a save refused for another reason than a conflict). */
  error: string | null;
  onSaveMerged: () => void;
  onEditMerged: () => void;
  onKeepTheirs: () => void;
  onBack: () => void;
  onOverwrite: () => void;
}

/**
 * A save refused because someone else saved first (409 on base_version). Nothing was written:
 * a modal dialog (focus moves into it; Escape goes back to editing) shows the three-way merge of
 * the version the user started from, theirs and the user's, and every way on is an explicit
 * choice: save the merge (against their version), edit it, keep theirs, go back, or replace.
 */
export function ConflictDialog({ path, conflict, busy, error, onSaveMerged, onEditMerged, onKeepTheirs, onBack, onOverwrite }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
    title.current?.focus();
  }, [conflict]);
  const { merge, baseVersion, theirVersion } = conflict;
  return (
    <dialog
      ref={dialog}
      class="conflict"
      aria-labelledby="conflict-title"
      aria-describedby="conflict-summary"
      onCancel={(e) => {
        e.preventDefault();
        onBack();
      }}
    >
      <h2 id="conflict-title" tabIndex={-1} ref={title}>
        Not saved: {path} was changed by someone else
      </h2>
      <p id="conflict-summary">
        You were editing version {baseVersion}; the server now has version {theirVersion}. Nothing was written, and your text is kept.
      </p>
      {merge === null ? (
        <p class="error">The merge could not be computed (the version you started from may be gone), so none is offered.</p>
      ) : merge.clean ? (
        <p class="ok">Your changes and theirs do not overlap: the merge below has both.</p>
      ) : (
        <p class="error">
          {merge.conflicts === 1 ? 'One place was' : `${merge.conflicts} places were`} changed on both sides. The merge marks {merge.conflicts === 1 ? 'it' : 'them'}{' '}
          (<code>{'<<<<<<< current'}</code> theirs, <code>=======</code>, <code>{'>>>>>>> incoming'}</code> yours)
          {merge.pointers ? <> at {merge.pointers.map((p) => <code key={p}>{p || '(the whole document)'}</code>)}</> : null}: edit it to choose.
        </p>
      )}
      {merge && (
        <pre class="merged" tabIndex={0} aria-label="Merged result">
          {merge.text}
        </pre>
      )}
      <details>
        <summary>Their version ({theirVersion})</summary>
        <pre tabIndex={0} aria-label="Current content on the server">{conflict.theirText}</pre>
      </details>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="actions">
        {merge?.clean && (
          <button type="button" disabled={busy} onClick={onSaveMerged}>
            Save the merged result
          </button>
        )}
        {merge && (
          <button type="button" disabled={busy} onClick={onEditMerged}>
            Edit the merged result
          </button>
        )}
        <button type="button" disabled={busy} onClick={onKeepTheirs}>
          Keep theirs (discard my changes)
        </button>
        <button type="button" onClick={onBack}>
          Back to editing
        </button>
        <button type="button" class="danger" disabled={busy} onClick={onOverwrite}>
          Replace version {theirVersion} with my text
        </button>
      </div>
    </dialog>
  );
}
