import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api/client.ts';
import type { CatAnswer, Entry } from '../api/types.ts';
import { TextEditor } from '../editor/TextEditor.tsx';
import { BlamePanel } from '../history/BlamePanel.tsx';
import { HistoryPanel } from '../history/HistoryPanel.tsx';
import { SnapshotsPanel } from '../history/SnapshotsPanel.tsx';
import { FilePreview } from '../preview/FilePreview.tsx';
import { downloadAddress } from '../preview/downloadAddress.ts';
import type { DashRoute, NodeTab } from '../route.ts';
import { NodeActions } from './NodeActions.tsx';
import { VersionView } from './VersionView.tsx';

interface Props {
  projectId: string;
  entry: Entry;
  /** The address: which tab, a version to show, two versions to compare. */
  route: DashRoute;
  onRoute: (r: DashRoute, replace?: boolean) => void;
  /** Bumped when the change feed reports a change to this node. */
  liveTick: number;
  onMoved: (newPath: string) => void;
  onTrashed: () => void;
}

/** The selected node: its content (editable for Markdown and JSON, previewed for files), its history, a folder's snapshots. */
export function NodeView({ projectId, entry, route, onRoute, liveTick, onMoved, onTrashed }: Props) {
  const [node, setNode] = useState<CatAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const tab: NodeTab = entry.type === 'folder' ? (route.tab === 'snapshots' || route.tab === 'history' ? route.tab : 'content') : route.tab === 'snapshots' ? 'content' : route.tab;
  const setTab = (t: NodeTab) => onRoute({ ...route, tab: t, version: null, diff: null });

  const read = () => api<CatAnswer>('GET', `/content/${projectId}/cat${query({ path: entry.path })}`);
  const reload = async () => {
    const fresh = await read();
    setNode(fresh);
    return fresh;
  };

  useEffect(() => {
    setNode(null);
    reload().catch((err: Error) => setError(err.message));
  }, [projectId, entry.path]);
  useEffect(() => {
    if (liveTick > 0) reload().catch((err: Error) => setError(err.message));
  }, [liveTick]);

  return (
    <section class="node" aria-label={`Node ${entry.path}`}>
      <Breadcrumbs path={entry.path} onOpen={(path) => onRoute({ ...route, path, tab: 'content', version: null, diff: null })} />
      <header class="bar">
        <h2>{entry.path}</h2>
        <NodeActions projectId={projectId} entry={entry} onMoved={onMoved} onTrashed={onTrashed} />
      </header>
      <div role="tablist" aria-label="Node views" class="tabs">
        <button type="button" role="tab" aria-selected={tab === 'content'} onClick={() => setTab('content')}>Content</button>
        <button type="button" role="tab" aria-selected={tab === 'history'} onClick={() => setTab('history')}>History</button>
        {entry.type !== 'folder' && (
          <button type="button" role="tab" aria-selected={tab === 'blame'} onClick={() => setTab('blame')}>Blame</button>
        )}
        {entry.type === 'folder' && (
          <button type="button" role="tab" aria-selected={tab === 'snapshots'} onClick={() => setTab('snapshots')}>Snapshots</button>
        )}
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {!node ? (
        <p aria-busy="true">Loading…</p>
      ) : tab === 'snapshots' && node.type === 'folder' ? (
        <SnapshotsPanel folderId={node.id} path={node.path} revision={node.version} onRolledBack={() => void reload()} />
      ) : tab === 'blame' && node.type !== 'folder' ? (
        <BlamePanel projectId={projectId} path={node.path} version={node.version} />
      ) : tab === 'history' ? (
        <HistoryPanel
          projectId={projectId}
          path={node.path}
          version={node.version}
          diff={route.diff}
          onDiff={(diff) => onRoute({ ...route, tab: 'history', diff, version: null })}
          onView={node.type === 'folder' ? undefined : (v) => onRoute({ ...route, tab: 'content', diff: null, version: v })}
          onRolledBack={() => void reload()}
        />
      ) : route.version !== null && route.version !== node.version && node.type !== 'folder' ? (
        <VersionView projectId={projectId} node={node} version={route.version} onCurrent={() => onRoute({ ...route, version: null })} />
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

/** A file's facts, a download through a short-lived address (GET /nodes/{id}/download), and its preview. */
function FileSummary({ node }: { node: CatAnswer }) {
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    try {
      location.assign(await downloadAddress(node.id, node.version));
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
      <FilePreview node={node} />
    </div>
  );
}

/** The folders above a node, each a way back up: the project root first. */
function Breadcrumbs({ path, onOpen }: { path: string; onOpen: (path: string | null) => void }) {
  const parts = path.split('/');
  return (
    <nav aria-label="Breadcrumbs" class="breadcrumbs">
      <ol>
        <li>
          <button type="button" class="link" onClick={() => onOpen(null)}>Project</button>
        </li>
        {parts.slice(0, -1).map((name, i) => (
          <li key={i}>
            <button type="button" class="link" onClick={() => onOpen(parts.slice(0, i + 1).join('/'))}>{name}</button>
          </li>
        ))}
        <li aria-current="page">{parts[parts.length - 1]}</li>
      </ol>
    </nav>
  );
}
