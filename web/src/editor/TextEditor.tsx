import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import type { CatAnswer } from '../api/types.ts';
import { ConflictDialog, type Conflict } from './ConflictDialog.tsx';
import { formatJson, parseJson } from './jsonText.ts';
import { JsonTree } from './JsonTree.tsx';
import { mergeWithServer } from './merge.ts';
import { MarkdownPreview } from './MarkdownPreview.tsx';

interface Props {
  projectId: string;
  node: CatAnswer & { type: 'markdown' | 'json' };
  /** Called with the node as the server has it after a save or a reload. */
  onSaved: (node: CatAnswer) => void;
  reload: () => Promise<CatAnswer>;
}

const textOf = (node: { type: string; content?: unknown }): string => (node.type === 'json' ? formatJson(node.content) : String(node.content ?? ''));

/**
 * The editor of a Markdown or JSON node, with the rendered Markdown (or the JSON's validity and
 * its structure) beside it. Saves send `base_version`, so a concurrent change is a conflict,
 * shown with the three-way merge, never an overwrite.
 */
export function TextEditor({ projectId, node, onSaved, reload }: Props) {
  const [text, setText] = useState(textOf(node));
  const [base, setBase] = useState<CatAnswer>(node);
  const [status, setStatus] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [busy, setBusy] = useState(false);
  /** Why this change, recorded with the version (optional; the service says "update <path>" without one). */
  const [message, setMessage] = useState('');

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

  /** Saves `source` as the next version after `baseVersion`; a 409 opens the conflict dialog. */
  const save = async (source: string, baseVersion: number) => {
    const checked = node.type === 'json' ? parseJson(source) : null;
    if (checked && !checked.ok) return;
    setBusy(true);
    setStatus(null);
    try {
      const content = checked?.ok ? checked.value : source;
      const saved = await api<{ version: number; changed: boolean }>('POST', `/content/${projectId}/write`, {
        path: node.path,
        node_type: node.type,
        content,
        base_version: baseVersion,
        ...(message.trim() ? { message: message.trim() } : {}),
      });
      setMessage('');
      setConflict(null);
      const now = { ...node, version: saved.version, content };
      setBase(now);
      setText(textOf(now));
      setStatus(saved.changed ? `Saved as version ${saved.version}.` : 'No change to save.');
      onSaved(now);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) setConflict(await conflictOf(source, baseVersion));
      else setStatus(`Not saved: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  /** What the server has now, and `mine` merged with it (by the service) against the version it was based on. */
  const conflictOf = async (mine: string, baseVersion: number): Promise<Conflict> => {
    const mineValue = node.type === 'json' ? (parseJson(mine) as { value: unknown }).value : mine;
    const [current, merge] = await Promise.all([reload(), mergeWithServer(projectId, node, mineValue, baseVersion).catch(() => null)]);
    return { baseVersion, theirVersion: current.version, theirText: textOf(current), theirContent: current.content, mine, merge };
  };

  const keepTheirs = async () => {
    const current = await reload();
    setBase(current);
    setText(textOf(current));
    setConflict(null);
    setStatus(`Kept version ${current.version}; your changes were discarded.`);
    onSaved(current);
  };

  /** The merge (with any conflict markers) becomes the editor's text, based on their version. */
  const editMerged = (c: Conflict) => {
    setText(c.merge!.text);
    setBase({ ...node, version: c.theirVersion, content: c.theirContent });
    setConflict(null);
    setStatus(c.merge!.clean ? 'The merged text is in the editor: check it and save.' : 'The merged text is in the editor: resolve the marked places, then save.');
  };

  const label = node.type === 'json' ? 'JSON source' : 'Markdown source';
  return (
    <div class="editor">
      {conflict && (
        <ConflictDialog
          path={node.path}
          conflict={conflict}
          busy={busy}
          error={status}
          onSaveMerged={() => void save(conflict.merge!.text, conflict.theirVersion)}
          onEditMerged={() => editMerged(conflict)}
          onKeepTheirs={() => void keepTheirs()}
          onBack={() => setConflict(null)}
          onOverwrite={() => void save(conflict.mine, conflict.theirVersion)}
        />
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
        {node.type === 'markdown' ? (
          <MarkdownPreview source={text} />
        ) : (
          <div class="json-side">
            <JsonValidity error={invalid} />
            {parsed?.ok && <JsonTree value={parsed.value} />}
          </div>
        )}
      </div>
      <div class="actions">
        <label class="save-message">
          <span class="visually-hidden">Message</span>
          <input type="text" value={message} maxLength={1000} placeholder="Describe the change (optional)" onInput={(e) => setMessage(e.currentTarget.value)} />
        </label>
        <button type="button" disabled={busy || !dirty || invalid !== null || conflict !== null} onClick={() => void save(text, base.version)}>
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
