import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, query } from '../api/client.ts';
import { followChanges } from '../api/changeFeed.ts';
import { sessionUser } from '../api/session.ts';
import type { CatAnswer, Entry, Project } from '../api/types.ts';
import { FileTree } from '../tree/FileTree.tsx';
import { moveInto } from '../tree/moveNode.ts';
import { parentOf, TreeStore } from '../tree/treeStore.ts';
import { ProjectHistoryPanel } from '../history/ProjectHistoryPanel.tsx';
import { SettingsPanel } from '../settings/SettingsPanel.tsx';
import { TrashPanel } from '../trash/TrashPanel.tsx';
import { UploadButton } from '../upload/UploadButton.tsx';
import { UploadList } from '../upload/uploadList.ts';
import { UploadProgress } from '../upload/UploadProgress.tsx';
import { LazyChat } from '../chat/LazyChat.tsx';
import { SearchBox } from '../search/SearchBox.tsx';
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
  const [showSettings, setShowSettings] = useState(false);
  const [showHistory, setShowHistory] = useState(false);
  const [showChat, setShowChat] = useState(false);
  const [revision, setRevision] = useState(0);
  /** The outcome of the last drag-and-drop move (uploads report in their own list). */
  const [moveNote, setMoveNote] = useState<{ text: string; failed: boolean } | null>(null);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;
  // The feed shows the new file too, but only in folders already loaded: reveal opens the way to it.
  const uploads = useMemo(
    () =>
      new UploadList(project.id, (entry) => {
        store.reveal(entry.path);
        store.refreshAround([entry.path]);
      }),
    [project.id],
  );

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
  /** Opens a node by its path (a search result, a version an agent wrote): revealed in the tree, shown in the main area. */
  const openPath = async (path: string) => {
    const entry = await api<Entry>('GET', `/content/${project.id}/stat${query({ path })}`);
    setShowSettings(false);
    created(entry);
  };

  /** A folder's id for the upload route: its loaded row, else asked of the API (null is the root). */
  const folderId = async (path: string): Promise<string | null> =>
    path === '' ? null : store.entry(path)?.id ?? (await api<CatAnswer>('GET', `/content/${project.id}/cat${query({ path })}`)).id;
  const upload = (target: Entry | null, files: File[]) => {
    const path = target?.path ?? folder;
    folderId(path).then(
      (id) => uploads.start({ path, id }, files),
      (err: Error) => setMoveNote({ text: `Cannot upload to /${path}: ${err.message}`, failed: true }),
    );
  };
  const moved = (oldPath: string, newPath: string) => {
    store.refreshAround([oldPath, newPath]);
    store.reveal(newPath);
    const current = selectedRef.current;
    if (current?.path === oldPath) setSelected({ ...current, path: newPath, name: newPath.split('/').pop()! });
  };
  const moveByDrag = (path: string, target: Entry) =>
    moveInto(project.id, path, target.path).then(
      (newPath) => {
        moved(path, newPath);
        setMoveNote({ text: `Moved ${path} to ${newPath}.`, failed: false });
      },
      (err: Error) => setMoveNote({ text: `Not moved: ${err.message}`, failed: true }),
    );

  return (
    <div class="workspace">
      <header class="bar top">
        <button type="button" onClick={onLeave}>← Projects</button>
        <h1>{project.name}</h1>
        <span class={`live ${live ? 'on' : ''}`} role="status" aria-label={live ? 'Live updates on' : 'Connecting to live updates'}>
          {live ? '● Live' : '○ Connecting'}
        </span>
        <button type="button" aria-pressed={showHistory} onClick={() => setShowHistory(!showHistory)}>Project history</button>
        <button type="button" aria-pressed={showChat} onClick={() => setShowChat(!showChat)}>Chat</button>
        <button type="button" aria-pressed={showTrash} onClick={() => setShowTrash(!showTrash)}>Trash</button>
        <button type="button" aria-pressed={showSettings} onClick={() => setShowSettings(!showSettings)}>Settings</button>
        <span class="who">{sessionUser()?.email}</span>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      <nav class="side" aria-label="Files">
        <SearchBox projectId={project.id} onOpen={openPath} />
        <CreateForm projectId={project.id} folder={folder} onCreated={created} />
        <UploadButton folder={folder} onFiles={(files) => upload(null, files)} />
        <UploadProgress uploads={uploads} />
        {moveNote && (
          <p role={moveNote.failed ? 'alert' : 'status'} class={moveNote.failed ? 'error' : 'ok'}>
            {moveNote.text}
          </p>
        )}
        <FileTree
          store={store}
          selected={selected?.path ?? null}
          onSelect={(entry) => {
            setShowSettings(false);
            setSelected(entry);
          }}
          drag={{ currentFolder: folder, onFiles: upload, onMove: (path, target) => void moveByDrag(path, target) }}
        />
      </nav>
      <main class="main">
        <LazyChat
          open={showChat}
          projectId={project.id}
          onOpen={(path) => void openPath(path).catch((err: Error) => setMoveNote({ text: `Cannot open /${path}: ${err.message}`, failed: true }))}
        />
        {showHistory && <ProjectHistoryPanel projectId={project.id} revision={revision} />}
        {showTrash && <TrashPanel projectId={project.id} revision={revision} />}
        {showSettings ? (
          <SettingsPanel projectId={project.id} />
        ) : selected ? (
          <NodeView
            key={selected.id}
            projectId={project.id}
            entry={selected}
            liveTick={liveTick}
            onMoved={(path) => moved(selected.path, path)}
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
