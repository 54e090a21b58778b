import { useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import type { Entry } from '../api/types.ts';

type Kind = 'folder' | 'markdown' | 'json';

interface Props {
  projectId: string;
  /** The folder new nodes go into ('' for the project root). */
  folder: string;
  onCreated: (entry: Entry) => void;
}

const STARTER: Record<Exclude<Kind, 'folder'>, unknown> = { markdown: '', json: {} };

/** Creates a folder, a Markdown document or a JSON document in the current folder. */
export function CreateForm({ projectId, folder, onCreated }: Props) {
  const [kind, setKind] = useState<Kind>('markdown');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    let n = name.trim();
    if (kind === 'markdown' && !/\.md$/i.test(n)) n += '.md';
    if (kind === 'json' && !/\.json$/i.test(n)) n += '.json';
    const path = folder ? `${folder}/${n}` : n;
    try {
      const entry =
        kind === 'folder'
          ? await api<Entry>('POST', `/content/${projectId}/mkdir`, { path })
          : // base_version 0: create only, never replace a document someone else just made at this path.
            await api<Entry>('POST', `/content/${projectId}/write`, { path, node_type: kind, content: STARTER[kind], base_version: 0 });
      setName('');
      setError(null);
      onCreated(entry);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? `${path} already exists.` : (err as Error).message);
    }
  };

  return (
    <form class="create" onSubmit={submit} aria-label="Create">
      <label>
        New
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          <option value="markdown">Markdown document</option>
          <option value="json">JSON document</option>
          <option value="folder">Folder</option>
        </select>
      </label>
      <label>
        Name (in /{folder})
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={!name.trim()}>Create</button>
      {error && <p role="alert" class="error">{error}</p>}
    </form>
  );
}
