import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, query } from '../api/client.ts';
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
import type { DashRoute, Panel } from '../route.ts';
import { PathIndex } from '../quickOpen/pathIndex.ts';
import { QuickOpen } from '../quickOpen/QuickOpen.tsx';
import { Shortcuts } from '../quickOpen/Shortcuts.tsx';
import { useShortcuts } from '../quickOpen/useShortcuts.ts';
import type { CommandId } from '../quickOpen/commands.ts';
import { CreateForm } from './CreateForm.tsx';
import { NotFound } from './NotFound.tsx';
import { NodeView } from './NodeView.tsx';
import { signOut } from './signOut.ts';

interface Props {
  project: Project;
  /** The view the address names: the open node, its tab, version or diff, and the project view beside it. */
  route: DashRoute;
  /** Shows another view (a new history entry, or in place with `replace`). */
  onRoute: (r: DashRoute, replace?: boolean) => void;
  onLeave: () => void;
}

/** One project: its tree, the selected node, the trash; kept current by the change feed. The address names what is open. */
export function Workspace({ project, route, onRoute, onLeave }: Props) {
  const store = useMemo(() => new TreeStore(project.id), [project.id]);
  const [selected, setSelectedEntry] = useState<Entry | null>(null);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;
  /** The node the address names could not be opened (not found, or outside the viewer's access). */
  const [missing, setMissing] = useState<string | null>(null);
  const [liveTick, setLiveTick] = useState(0);
  const [live, setLive] = useState(false);
  const [revision, setRevision] = useState(0);
  /** Phones: the tree is a drawer (open at first when no node is open) and the header's actions are a menu. */
  const [drawer, setDrawer] = useState(route.path === null);
  const [menu, setMenu] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  /** The quick open palette or the shortcuts list, when open. */
  const [overlay, setOverlay] = useState<'quick' | 'keys' | null>(null);
  const paths = useMemo(() => new PathIndex(project.id), [project.id]);
  /** What a command wants focused once the palette has closed (and given focus back where it was). */
  const focusAfterClose = useRef<string | null>(null);
  useEffect(() => {
    const selector = focusAfterClose.current;
    if (overlay || !selector) return;
    focusAfterClose.current = null;
    document.querySelector<HTMLElement>(selector)?.focus();
  }, [overlay]);
  useShortcuts({ quickOpen: () => setOverlay('quick'), shortcuts: () => setOverlay('keys') });
  const routeRef = useRef(route);
  routeRef.current = route;
  const panel = route.panel;
  const showHistory = panel === 'history';
  const showTrash = panel === 'trash';
  const showSettings = panel === 'settings';
  const showChat = panel === 'chat';
  /** Opens a node (or none): the address follows; `replace` when the same node only moved. */
  const setSelected = (entry: Entry | null, replace = false) => {
    setSelectedEntry(entry);
    setMissing(null);
    const r = routeRef.current;
    if (entry?.path === r.path) return;
    const next: DashRoute = { ...r, path: entry?.path ?? null, tab: 'content', version: null, diff: null };
    // Opening a node from settings leaves them, as it always did.
    if (entry && !replace && r.panel === 'settings') next.panel = null;
    onRoute(next, replace);
  };
  const togglePanel = (p: Panel) => onRoute({ ...routeRef.current, panel: routeRef.current.panel === p ? null : p, chat: null, q: null });

  // The node the address names, found when it changes (a link, a reload, back/forward).
  useEffect(() => {
    const path = route.path;
    if (path === null) {
      setSelectedEntry(null);
      setMissing(null);
      return;
    }
    if (selectedRef.current?.path === path) return;
    let gone = false;
    api<Entry>('GET', `/content/${project.id}/stat${query({ path })}`).then(
      (entry) => {
        if (gone) return;
        store.reveal(entry.path);
        setSelectedEntry(entry);
        setMissing(null);
      },
      (err: unknown) => {
        if (gone) return;
        setSelectedEntry(null);
        setMissing(err instanceof ApiError && [403, 404, 422].includes(err.status) ? path : null);
      },
    );
    return () => {
      gone = true;
    };
  }, [route.path]);
  /** The outcome of the last drag-and-drop move (uploads report in their own list). */
  const [moveNote, setMoveNote] = useState<{ text: string; failed: boolean } | null>(null);
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
          paths.apply(event);
          if (event.truncated) store.refreshAll();
          else store.refreshAround(event.changes.flatMap((c) => [c.path, c.old_path]));
          setRevision((r) => r + 1);
          const current = selectedRef.current;
          const change = current && event.changes.find((c) => c.node_id === current.id);
          if (!current || !change) return;
          // Deleted elsewhere: the open view would show a node that is now in the trash.
          if (isRemoval(change)) return setSelected(null, true);
          if (change.path !== current.path) setSelected({ ...current, path: change.path, name: change.path.split('/').pop()! }, true);
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
    created(entry);
    if (entry.type !== 'folder') setDrawer(false);
  };

  /** A file chosen in quick open: shown as a tree click would (the address follows), revealed in the tree. */
  const openFound = (path: string) =>
    void api<Entry>('GET', `/content/${project.id}/stat${query({ path })}`).then(
      (entry) => {
        store.reveal(entry.path);
        setSelected(entry);
        setDrawer(false);
      },
      (err: Error) => setMoveNote({ text: `Cannot open /${path}: ${err.message}`, failed: true }),
    );
  const runCommand = (id: CommandId) => {
    const show = (p: Panel) => {
      setDrawer(false);
      onRoute({ ...routeRef.current, panel: p, chat: null, q: null });
    };
    const focusLater = (selector: string) => (focusAfterClose.current = selector);
    if (id === 'new-file') {
      setDrawer(true);
      focusLater('form.create input');
    } else if (id === 'search') {
      setDrawer(true);
      focusLater('.search input, .search button');
    } else if (id === 'shortcuts') setOverlay('keys');
    else show(id);
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
    if (current?.path === oldPath) setSelected({ ...current, path: newPath, name: newPath.split('/').pop()! }, true);
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
        <button type="button" class="phone-only" aria-expanded={drawer} aria-controls="files-drawer" onClick={() => {
          setDrawer(!drawer);
          setMenu(false);
        }}>
          {drawer ? 'Close files' : 'Files'}
        </button>
        <h1 title={project.name}>{project.name}</h1>
        <span class={`live ${live ? 'on' : ''}`} role="status" aria-label={live ? 'Live updates on' : 'Connecting to live updates'}>
          {live ? '● Live' : '○ Connecting'}
        </span>
        <button type="button" class="phone-only" ref={menuButton} aria-expanded={menu} aria-controls="workspace-menu" onClick={() => setMenu(!menu)}>
          Menu
        </button>
        <div id="workspace-menu" class={`top-actions${menu ? ' open' : ''}`} onClick={(e) => {
            // A choice closes the menu, and on a phone the drawer too: the view chosen takes the screen.
            if (!(e.target as HTMLElement).closest('button')) return;
            setMenu(false);
            setDrawer(false);
          }}
          onKeyDown={(e) => {
            if (e.key !== 'Escape' || !menu) return;
            setMenu(false);
            menuButton.current?.focus();
          }}>
          <button type="button" class="back" onClick={onLeave}>← Projects</button>
          <button type="button" aria-keyshortcuts="Control+K Meta+K" title="Ctrl+K" onClick={() => setOverlay('quick')}>Quick open</button>
          <button type="button" aria-pressed={showHistory} onClick={() => togglePanel('history')}>Project history</button>
          <button type="button" aria-pressed={showChat} onClick={() => togglePanel('chat')}>Chat</button>
          <button type="button" aria-pressed={showTrash} onClick={() => togglePanel('trash')}>Trash</button>
          <button type="button" aria-pressed={showSettings} onClick={() => togglePanel('settings')}>Settings</button>
          <span class="who">{sessionUser()?.email}</span>
          <button type="button" onClick={() => void signOut()}>Sign out</button>
        </div>
      </header>
      {drawer && <button type="button" class="drawer-backdrop phone-only" aria-label="Close files" tabIndex={-1} onClick={() => setDrawer(false)} />}
      <nav id="files-drawer" class={`side${drawer ? ' open' : ''}`} aria-label="Files">
        <SearchBox
          projectId={project.id}
          onOpen={openPath}
          query={panel === 'search' ? route.q ?? '' : null}
          onQuery={(q) => onRoute({ ...routeRef.current, panel: q ? 'search' : null, q: q || null, chat: null }, routeRef.current.panel === 'search')}
        />
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
            setSelected(entry);
            // On a phone the tree is a drawer: an opened file takes the screen.
            if (entry.type !== 'folder') setDrawer(false);
          }}
          drag={{ currentFolder: folder, onFiles: upload, onMove: (path, target) => void moveByDrag(path, target) }}
        />
      </nav>
      <main class="main">
        <LazyChat
          open={showChat}
          projectId={project.id}
          session={showChat ? route.chat : null}
          onSession={(id) => onRoute({ ...routeRef.current, panel: 'chat', chat: id }, true)}
          onOpen={(path) => void openPath(path).catch((err: Error) => setMoveNote({ text: `Cannot open /${path}: ${err.message}`, failed: true }))}
        />
        {showHistory && <ProjectHistoryPanel projectId={project.id} revision={revision} />}
        {showTrash && <TrashPanel projectId={project.id} revision={revision} />}
        {showSettings ? (
          <SettingsPanel projectId={project.id} />
        ) : missing !== null ? (
          <NotFound what={`/${missing}`} />
        ) : selected ? (
          <NodeView
            key={selected.id}
            projectId={project.id}
            entry={selected}
            route={route}
            onRoute={onRoute}
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
      {overlay === 'quick' && <QuickOpen index={paths} onOpen={openFound} onCommand={runCommand} onClose={() => setOverlay(null)} />}
      {overlay === 'keys' && <Shortcuts onClose={() => setOverlay(null)} />}
    </div>
  );
}

function isRemoval(change: { operation: string; path: string }): boolean {
  return /delete|trash|purge/.test(change.operation) || change.path === '.trash' || change.path.startsWith('.trash/');
}
