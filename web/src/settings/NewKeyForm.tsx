import { useState } from 'preact/hooks';
import type { Mode } from './types.ts';

export interface NewKeyRequest {
  name: string;
  /** '' is the whole project. */
  scope_path: string;
  mode: Mode;
}

/** Name, reach and mode of a new access key; the parent creates it (and says whether it did). */
export function NewKeyForm({ onCreate }: { onCreate: (request: NewKeyRequest) => Promise<boolean> }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState('');
  const [mode, setMode] = useState<Mode>('read');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const made = await onCreate({ name: name.trim(), scope_path: scope.trim().replace(/^\/+|\/+$/g, ''), mode });
    setBusy(false);
    if (made) {
      setName('');
      setScope('');
    }
  };
  return (
    <form class="inline" aria-label="Create an access key" onSubmit={(e) => void submit(e)}>
      <label>
        Key name
        <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Folder it may reach
        <input value={scope} placeholder="whole project" onInput={(e) => setScope(e.currentTarget.value)} />
      </label>
      <label>
        Access
        <select aria-label="Access" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
          <option value="read">read only</option>
          <option value="read_write">read and write</option>
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Create key
      </button>
    </form>
  );
}
