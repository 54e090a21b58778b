import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api/client.ts';
import type { CatAnswer, Entry } from '../api/types.ts';
import { TextEditor } from '../editor/TextEditor.tsx';
import { HistoryPanel } from '../history/HistoryPanel.tsx';
import { NodeActions } from './NodeActions.tsx';

interface Props {
  projectId: string;
  entry: Entry;
  /** Bumped when the change feed reports a change to this node. */
  liveTick: number;
  onMoved: (newPath: string) => void;
  onTrashed: () => void;
}

/** The selected node: its content (editable for Markdown and JSON) or its history. */
export function NodeView({ projectId, entry, liveTick, onMoved, onTrashed }: Props) {
  const [node, setNode] = useState<CatAnswer | null>(null);
  const [tab, setTab] = useState<'content' | 'history'>('content');
  const [error, setError] = useState<string | null>(null);

  const read = () => api<CatAnswer>('GET', `/content/${projectId}/cat${query({ path: entry.path })}`);
  const reload = async () => {
    const fresh = await read();
    setNode(fresh);
    return fresh;
  };

  useEffect(() => {
    setNode(null);
    setTab('content');
    reload().catch((err: Error) => setError(err.message));
  }, [projectId, entry.path]);
  useEffect(() => {
    if (liveTick > 0) reload().catch((err: Error) => setError(err.message));
  }, [liveTick]);

  return (
    <section class="node" aria-label={`Node ${entry.path}`}>
      <header class="bar">
        <h2>{entry.path}</h2>
        <NodeActions projectId={projectId} entry={entry} onMoved={onMoved} onTrashed={onTrashed} />
      </header>
      <div role="tablist" aria-label="Node views" class="tabs">
        <button type="button" role="tab" aria-selected={tab === 'content'} onClick={() => setTab('content')}>Content</button>
        <button type="button" role="tab" aria-selected={tab === 'history'} onClick={() => setTab('history')}>History</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {!node ? (
        <p aria-busy="true">Loading…</p>
      ) : tab === 'history' ? (
        <HistoryPanel projectId={projectId} path={node.path} version={node.version} onRolledBack={() => void reload()} />
      ) : node.type === 'markdown' || node.type === 'json' ? (
        <TextEditor key={node.path} projectId={projectId} node={node as CatAnswer & { type: 'markdown' | 'json' }} onSaved={setNode} reload={reload} />
      ) : node.type === 'folder' ? (
        <p>Folder, {(node as CatAnswer & { children_count?: number }).children_count ?? 0} items. Open it in the tree to see them.</p>
      ) : (
        <FileSummary node={node} />
      )}
    </section>
  );
}

/** A file's facts and a download through a short-lived address (GET /nodes/{id}/download). */
function FileSummary({ node }: { node: CatAnswer }) {
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    try {
      const r = await api<{ download_url: string }>('GET', `/nodes/${node.id}/download`);
      // Same origin as the dashboard: the configured base URL may name another host (a proxy).
      const url = new URL(r.download_url, location.origin);
      location.assign(url.pathname + url.search);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div>
      <p>
        File, {node.size ?? 0} bytes{node.mime_type ? `, ${node.mime_type}` : ''}, version {node.version}.
      </p>
      <button type="button" onClick={() => void download()}>Download</button>
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  );
}
