import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { followChanges } from '../api/changeFeed.ts';
import { sessionUser } from '../api/session.ts';
import type { Entry, Project } from '../api/types.ts';
import { FileTree } from '../tree/FileTree.tsx';
import { parentOf, TreeStore } from '../tree/treeStore.ts';
import { TrashPanel } from '../trash/TrashPanel.tsx';
import { CreateForm } from './CreateForm.tsx';
import { NodeView } from './NodeView.tsx';
import { signOut } from './signOut.ts';

/** One project: its tree, the selected node, the trash; kept current by the change feed. */
export function Workspace({ project, onLeave }: { project: Project; onLeave: () => void }) {
  const store = useMemo(() => new TreeStore(project.id), [project.id]);
  const [selected, setSelected] = useState<Entry | null>(null);
  const [liveTick, setLiveTick] = useState(0);
  const [live, setLive] = useState(false);
  const [showTrash, setShowTrash] = useState(false);
  const [revision, setRevision] = useState(0);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;

  // Every change (ours, another client's, a git push, an agent) reaches the tree through the feed.
  useEffect(
    () =>
      followChanges(
        project.id,
        (event) => {
          if (event.truncated) store.refreshAll();
          else store.refreshAround(event.changes.flatMap((c) => [c.path, c.old_path]));
          setRevision((r) => r + 1);
          const current = selectedRef.current;
          const change = current && event.changes.find((c) => c.node_id === current.id);
          if (!current || !change) return;
          // Deleted elsewhere: the open view would show a node that is now in the trash.
          if (isRemoval(change)) return setSelected(null);
          if (change.path !== current.path) setSelected({ ...current, path: change.path, name: change.path.split('/').pop()! });
          setLiveTick((t) => t + 1);
        },
        () => setLive(true),
      ),
    [project.id],
  );

  const folder = !selected ? '' : selected.type === 'folder' ? selected.path : parentOf(selected.path);
  const created = (entry: Entry) => {
    store.reveal(entry.path);
    store.refreshAround([entry.path]);
    setSelected(entry);
  };

  return (
    <div class="workspace">
      <header class="bar top">
        <button type="button" onClick={onLeave}>← Projects</button>
        <h1>{project.name}</h1>
        <span class={`live ${live ? 'on' : ''}`} role="status" aria-label={live ? 'Live updates on' : 'Connecting to live updates'}>
          {live ? '● Live' : '○ Connecting'}
        </span>
        <button type="button" aria-pressed={showTrash} onClick={() => setShowTrash(!showTrash)}>Trash</button>
        <span class="who">{sessionUser()?.email}</span>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      <nav class="side" aria-label="Files">
        <CreateForm projectId={project.id} folder={folder} onCreated={created} />
        <FileTree store={store} selected={selected?.path ?? null} onSelect={setSelected} />
      </nav>
      <main class="main">
        {showTrash && <TrashPanel projectId={project.id} revision={revision} />}
        {selected ? (
          <NodeView
            key={selected.id}
            projectId={project.id}
            entry={selected}
            liveTick={liveTick}
            onMoved={(path) => {
              store.refreshAround([selected.path, path]);
              setSelected({ ...selected, path, name: path.split('/').pop()! });
            }}
            onTrashed={() => {
              store.refreshAround([selected.path]);
              setSelected(null);
            }}
          />
        ) : (
          <p class="muted">Choose a file or folder in the tree.</p>
        )}
      </main>
    </div>
  );
}

function isRemoval(change: { operation: string; path: string }): boolean {
  return /delete|trash|purge/.test(change.operation) || change.path === '.trash' || change.path.startsWith('.trash/');
}
