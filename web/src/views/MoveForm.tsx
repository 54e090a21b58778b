import { useState } from 'preact/hooks';
import type { Entry } from '../api/types.ts';
import { moveInto } from '../tree/moveNode.ts';
import { parentOf } from '../tree/treeStore.ts';

interface Props {
  projectId: string;
  entry: Entry;
  onMoved: (newPath: string) => void;
  onCancel: () => void;
}

/** "Move to…": the keyboard's way to do what dragging a row onto a folder does. */
export function MoveForm({ projectId, entry, onMoved, onCancel }: Props) {
  const [folder, setFolder] = useState(parentOf(entry.path));
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      // Leading and trailing slashes are how people write folders; the API's paths have none.
      onMoved(await moveInto(projectId, entry.path, folder.trim().replace(/^\/+|\/+$/g, '')));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="inline" onSubmit={submit} aria-label={`Move ${entry.name}`}>
      <label>
        Target folder (empty for the project root)
        <input value={folder} onInput={(e) => setFolder(e.currentTarget.value)} autoFocus />
      </label>
      <button type="submit">Move</button>
      <button type="button" onClick={onCancel}>Cancel</button>
      {error && <p role="alert" class="error">{error}</p>}
    </form>
  );
}
