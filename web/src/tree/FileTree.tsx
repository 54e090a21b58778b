import { useEffect, useReducer, useState } from 'preact/hooks';
import type { Entry } from '../api/types.ts';
import { formatSize } from './formatSize.ts';
import { NodeIcon } from './NodeIcon.tsx';
import { AREA, areaDrop, rowDrag, type DragHandlers, type DragState } from './treeDrops.ts';
import type { TreeStore } from './treeStore.ts';

interface Props {
  store: TreeStore;
  selected: string | null;
  onSelect: (entry: Entry) => void;
  drag: DragHandlers;
}

/**
 * The project's tree (ARIA tree): folders open on click or Enter and load their children then.
 * Files dragged from the desktop upload into the folder row they are dropped on (or, elsewhere
 * on the tree, into the current folder); a row dragged onto a folder row moves there.
 */
export function FileTree({ store, selected, onSelect, drag }: Props) {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const [dragging, setDragging] = useState<string | null>(null);
  const [over, setOver] = useState<string | null>(null);
  useEffect(() => store.subscribe(() => rerender(undefined)), [store]);
  useEffect(() => {
    if (!store.folder('')) void store.load('');
  }, [store]);
  const state: DragState = { dragging, over, setDragging, setOver };
  return (
    <div class={`tree-area${over === AREA ? ' drop-here' : ''}`} {...areaDrop(drag, state)}>
      <ul role="tree" aria-label="Project files" class="tree" onKeyDown={(e) => moveFocus(e, store)}>
        <Children store={store} path="" depth={1} selected={selected} onSelect={onSelect} drag={drag} state={state} />
      </ul>
      <p class="muted hint">Drop files here to upload them to /{drag.currentFolder}, or on a folder to upload them there. Drag a row onto a folder to move it.</p>
    </div>
  );
}

function Children({ store, path, depth, selected, onSelect, drag, state }: Props & { path: string; depth: number; state: DragState }) {
  const folder = store.folder(path);
  if (!folder || (folder.loading && folder.children.length === 0)) return <li class="muted" aria-busy="true">Loading…</li>;
  return (
    <>
      {folder.error && <li role="alert" class="error">{folder.error}</li>}
      {folder.children.length === 0 && !folder.loading && <li class="muted">Empty folder</li>}
      {folder.children.map((e) => (
        <Row key={e.id} entry={e} store={store} depth={depth} selected={selected} onSelect={onSelect} drag={drag} state={state} />
      ))}
      {folder.next && (
        <li>
          <button type="button" class="link" disabled={folder.loading} onClick={() => void store.load(path, true)} aria-label={`Load more in ${path || 'the project root'}`}>
            Load more…
          </button>
        </li>
      )}
    </>
  );
}

function Row({ entry, store, depth, selected, onSelect, drag, state }: Props & { entry: Entry; depth: number; state: DragState }) {
  const isFolder = entry.type === 'folder';
  const open = isFolder && store.expanded.has(entry.path);
  const activate = () => {
    if (isFolder) store.toggle(entry.path);
    onSelect(entry);
  };
  return (
    <li role="treeitem" aria-expanded={isFolder ? open : undefined} aria-selected={selected === entry.path} aria-level={depth}>
      <button
        type="button"
        class={`row${selected === entry.path ? ' selected' : ''}${state.over === entry.path ? ' drop-here' : ''}`}
        style={{ paddingLeft: `${depth * 0.9}rem` }}
        onClick={activate}
        aria-label={`${entry.name} (${entry.type})`}
        data-path={entry.path}
        {...rowDrag(entry, drag, state)}
      >
        <NodeIcon type={entry.type} open={open} />
        {entry.name}
        {entry.type !== 'folder' && <span class="size">{formatSize(entry.size)}</span>}
      </button>
      {open && (
        <ul role="group">
          <Children store={store} path={entry.path} depth={depth + 1} selected={selected} onSelect={onSelect} drag={drag} state={state} />
        </ul>
      )}
    </li>
  );
}

/**
 * Arrow keys as in a tree: up and down move between visible rows, right opens a folder, left
 * closes it (Tab still moves through the rows, and Enter opens one).
 */
function moveFocus(e: KeyboardEvent, store: TreeStore): void {
  const tree = e.currentTarget as HTMLElement;
  const rows = [...tree.querySelectorAll<HTMLButtonElement>('button.row')];
  const at = rows.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0) return;
  const row = rows[at]!;
  const item = row.closest('[role="treeitem"]');
  const path = row.dataset.path ?? '';
  if (e.key === 'ArrowDown') rows[Math.min(rows.length - 1, at + 1)]!.focus();
  else if (e.key === 'ArrowUp') rows[Math.max(0, at - 1)]!.focus();
  else if (e.key === 'ArrowRight' && item?.getAttribute('aria-expanded') === 'false') store.toggle(path);
  else if (e.key === 'ArrowLeft' && item?.getAttribute('aria-expanded') === 'true') store.toggle(path);
  else return;
  e.preventDefault();
}
