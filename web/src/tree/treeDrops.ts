import type { Entry } from '../api/types.ts';
import { carriesFiles, carriesNode, nodePath, setNode } from './dragData.ts';
import { moveRefusal } from './moveNode.ts';

/** What drops on the tree do; the tree itself only recognizes them. */
export interface DragHandlers {
  /** Where files dropped on the tree but not on a folder row go ('' for the project root). */
  currentFolder: string;
  /** Files from the desktop, dropped on a folder row (`folder`) or elsewhere on the tree (null). */
  onFiles: (folder: Entry | null, files: File[]) => void;
  /** A row dropped on a folder row. */
  onMove: (path: string, folder: Entry) => void;
}

/** The drag in progress over the tree: the row being dragged (a move) and where it would land. */
export interface DragState {
  dragging: string | null;
  over: string | null;
  setDragging: (path: string | null) => void;
  setOver: (path: string | null) => void;
}

/** The tree area's own drop target, told apart from every row's path. */
export const AREA = '\0area';

/** The tree area takes desktop files that no folder row took: they go to the current folder. */
export function areaDrop(drag: DragHandlers, state: DragState) {
  return {
    onDragOver(e: DragEvent) {
      if (!carriesFiles(e.dataTransfer)) return;
      e.preventDefault();
      e.dataTransfer!.dropEffect = 'copy';
      state.setOver(AREA);
    },
    onDragLeave(e: DragEvent) {
      if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) state.setOver(null);
    },
    onDrop(e: DragEvent) {
      state.setOver(null);
      if (!carriesFiles(e.dataTransfer)) return;
      e.preventDefault();
      drag.onFiles(null, [...e.dataTransfer!.files]);
    },
  };
}

/**
 * Every row can be dragged (to move it); a folder row takes desktop files (an upload into it)
 * and any row that may move into it: not itself, a row already in it, or one of its ancestors.
 * A drag begun in another tab is not known here; the move refuses it on drop.
 */
export function rowDrag(entry: Entry, drag: DragHandlers, state: DragState) {
  const accepts = (dt: DataTransfer | null) =>
    entry.type === 'folder' &&
    (carriesFiles(dt) || (carriesNode(dt) && (state.dragging === null || moveRefusal(state.dragging, entry.path) === null)));
  return {
    draggable: true,
    onDragStart(e: DragEvent) {
      setNode(e.dataTransfer!, entry);
      state.setDragging(entry.path);
    },
    onDragEnd() {
      state.setDragging(null);
      state.setOver(null);
    },
    onDragOver(e: DragEvent) {
      if (!accepts(e.dataTransfer)) return;
      // Taken here: the tree area's own drop (into the current folder) must not see it.
      e.preventDefault();
      e.stopPropagation();
      e.dataTransfer!.dropEffect = carriesFiles(e.dataTransfer) ? 'copy' : 'move';
      state.setOver(entry.path);
    },
    onDragLeave() {
      if (state.over === entry.path) state.setOver(null);
    },
    onDrop(e: DragEvent) {
      if (!accepts(e.dataTransfer)) return;
      e.preventDefault();
      e.stopPropagation();
      state.setOver(null);
      state.setDragging(null);
      if (carriesFiles(e.dataTransfer)) drag.onFiles(entry, [...e.dataTransfer!.files]);
      else drag.onMove(nodePath(e.dataTransfer!), entry);
    },
  };
}
