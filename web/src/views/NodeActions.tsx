import { useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import type { Entry } from '../api/types.ts';
import { parentOf } from '../tree/treeStore.ts';
import { MoveForm } from './MoveForm.tsx';

interface Props {
  projectId: string;
  entry: Entry;
  onMoved: (newPath: string) => void;
  onTrashed: () => void;
}

/** Rename (a move within its folder), move to another folder and delete to the trash, for the selected node. */
export function NodeActions({ projectId, entry, onMoved, onTrashed }: Props) {
  const [renaming, setRenaming] = useState(false);
  const [moving, setMoving] = useState(false);
  const [name, setName] = useState(entry.name);
  const [error, setError] = useState<string | null>(null);

  const rename = async (e: Event) => {
    e.preventDefault();
    const parent = parentOf(entry.path);
    const newPath = parent ? `${parent}/${name.trim()}` : name.trim();
    try {
      await api('POST', `/content/${projectId}/mv`, { old_path: entry.path, new_path: newPath });
      setRenaming(false);
      setError(null);
      onMoved(newPath);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };

  const trash = async () => {
    try {
      await api('POST', `/content/${projectId}/rm`, { path: entry.path });
      onTrashed();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };

  return (
    <div class="node-actions">
      {renaming ? (
        <form class="inline" onSubmit={rename} aria-label={`Rename ${entry.name}`}>
          <label>
            New name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={!name.trim() || name.trim() === entry.name}>Rename</button>
          <button type="button" onClick={() => setRenaming(false)}>Cancel</button>
        </form>
      ) : moving ? (
        <MoveForm projectId={projectId} entry={entry} onMoved={(path) => { setMoving(false); onMoved(path); }} onCancel={() => setMoving(false)} />
      ) : (
        <>
          <button type="button" onClick={() => { setName(entry.name); setRenaming(true); }}>Rename…</button>
          <button type="button" onClick={() => setMoving(true)}>Move to…</button>
          <button type="button" class="danger" onClick={() => void trash()}>Move to trash</button>
        </>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  );
}
