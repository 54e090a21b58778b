import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import type { CatAnswer } from '../api/types.ts';
import { ConflictNotice, type Conflict } from './ConflictNotice.tsx';
import { formatJson, parseJson } from './jsonText.ts';
import { MarkdownPreview } from './MarkdownPreview.tsx';

interface Props {
  projectId: string;
  node: CatAnswer & { type: 'markdown' | 'json' };
  /** Called with the node as the server has it after a save or a reload. */
  onSaved: (node: CatAnswer) => void;
  reload: () => Promise<CatAnswer>;
}

const textOf = (node: CatAnswer): string => (node.type === 'json' ? formatJson(node.content) : String(node.content ?? ''));

/**
 * The editor of a Markdown or JSON node, with the rendered Markdown (or the JSON's validity)
 * beside it. Saves send `base_version`, so a concurrent change is a conflict, never an overwrite.
 */
export function TextEditor({ projectId, node, onSaved, reload }: Props) {
  const [text, setText] = useState(textOf(node));
  const [base, setBase] = useState<CatAnswer>(node);
  const [status, setStatus] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [busy, setBusy] = useState(false);

  // Another client's change to the open node: follow it unless the user has edits of their own.
  // With edits, the base stays the version they started from, so saving shows the conflict.
  useEffect(() => {
    if (node.version === base.version || text !== textOf(base)) return;
    setText(textOf(node));
    setBase(node);
  }, [node]);

  const parsed = node.type === 'json' ? parseJson(text) : null;
  const invalid = parsed !== null && !parsed.ok ? parsed.error : null;
  const dirty = text !== textOf(base);

  const save = async (baseVersion: number) => {
    if (invalid) return;
    setBusy(true);
    setStatus(null);
    try {
      const content = parsed?.ok ? parsed.value : text;
      const saved = await api<{ version: number; changed: boolean }>('POST', `/content/${projectId}/write`, {
        path: node.path,
        node_type: node.type,
        content,
        base_version: baseVersion,
      });
      setConflict(null);
      const now = { ...node, version: saved.version, content };
      setBase(now);
      if (node.type === 'json') setText(formatJson(content));
      setStatus(saved.changed ? `Saved as version ${saved.version}.` : 'No change to save.');
      onSaved(now);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        const current = await reload();
        setConflict({ baseVersion, currentVersion: current.version, currentText: textOf(current) });
      } else setStatus(`Not saved: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const loadCurrent = async () => {
    const current = await reload();
    setBase(current);
    setText(textOf(current));
    setConflict(null);
    onSaved(current);
  };

  const label = node.type === 'json' ? 'JSON source' : 'Markdown source';
  return (
    <div class="editor">
      {conflict && (
        <ConflictNotice path={node.path} conflict={conflict} onLoadCurrent={() => void loadCurrent()} onOverwrite={() => void save(conflict.currentVersion)} />
      )}
      <div class="split">
        <label class="source">
          {label}
          <textarea
            value={text}
            spellcheck={node.type === 'markdown'}
            aria-invalid={invalid ? true : undefined}
            aria-describedby={node.type === 'json' ? 'editor-validity' : undefined}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
        {node.type === 'markdown' ? <MarkdownPreview source={text} /> : <JsonValidity error={invalid} />}
      </div>
      <div class="actions">
        <button type="button" disabled={busy || !dirty || invalid !== null || conflict !== null} onClick={() => void save(base.version)}>
          Save
        </button>
        <span role="status" class="muted">
          {status ?? (dirty ? `Unsaved changes (editing version ${base.version})` : `Version ${base.version}`)}
          {dirty && node.version > base.version && ` — version ${node.version} was saved elsewhere meanwhile`}
        </span>
      </div>
    </div>
  );
}

function JsonValidity({ error }: { error: string | null }) {
  return (
    <p id="editor-validity" class={error ? 'error' : 'ok'} role={error ? 'alert' : undefined}>
      {error ? `Invalid JSON, not saved: ${error}` : 'Valid JSON.'}
    </p>
  );
}
