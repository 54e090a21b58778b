import { useState } from 'preact/hooks';
import { api, query } from '../api/client.ts';
import type { NodeDiff } from '../api/types.ts';
import { DiffView } from '../history/DiffView.tsx';
import type { WrittenVersion } from './types.ts';

interface Props {
  projectId: string;
  written: WrittenVersion;
  onOpen: (path: string) => void;
}

/**
 * A version an agent wrote: a toggle that shows what it changed (the diff against the version
 * before it, `GET diff`; a first version is shown whole, from `GET version-content`) with the
 * history's diff view, and a button that opens the node in the tree.
 */
export function VersionLink({ projectId, written, onOpen }: Props) {
  const { path, version } = written;
  const [open, setOpen] = useState(false);
  const [diff, setDiff] = useState<NodeDiff | null>(null);
  const [error, setError] = useState<string | null>(null);

  const toggle = () => {
    setOpen(!open);
    if (open || diff) return;
    setError(null);
    changesOf(projectId, written).then(setDiff, (err: Error) => setError(err.message));
  };

  return (
    <li>
      <button type="button" class="link" aria-expanded={open} onClick={toggle}>
        {path} version {version}
      </button>
      {open && (
        <div class="version-diff">
          {error ? (
            <p role="alert" class="error">The changes could not be shown: {error}</p>
          ) : !diff ? (
            <p aria-busy="true">Loading the changes…</p>
          ) : (
            <DiffView diff={diff} v1={version - 1} v2={version} />
          )}
          <button type="button" onClick={() => onOpen(path)}>Open {path} in the tree</button>
        </div>
      )}
    </li>
  );
}

async function changesOf(projectId: string, { path, version }: WrittenVersion): Promise<NodeDiff> {
  if (version > 1) return api<NodeDiff>('GET', `/content/${projectId}/diff${query({ path, v1: version - 1, v2: version })}`);
  // A node the agent created: everything in it is new.
  const first = await api<{ content?: unknown; content_text?: string; content_base64?: string }>(
    'GET',
    `/content/${projectId}/version-content${query({ path, version })}`,
  );
  const text = typeof first.content === 'string' ? first.content : first.content !== undefined ? JSON.stringify(first.content, null, 2) : first.content_text;
  if (text === undefined) return { kind: 'binary', identical: false };
  const lines = text.replace(/\n$/, '').split('\n');
  return { kind: 'text', unified_diff: [`@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`)].join('\n') };
}
