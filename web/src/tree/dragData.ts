import type { Entry } from '../api/types.ts';

/**
 * What a drag over the tree carries: files from the desktop (an upload) or one of the tree's
 * own rows (a move). A row's drag uses a type of its own, so text dragged in from elsewhere
 * is neither.
 */
export const NODE_TYPE = 'application/x-cns-node';

export function carriesFiles(dt: DataTransfer | null): boolean {
  return !!dt && [...dt.types].includes('Files');
}

export function carriesNode(dt: DataTransfer | null): boolean {
  return !!dt && [...dt.types].includes(NODE_TYPE);
}

export function setNode(dt: DataTransfer, entry: Entry): void {
  dt.setData(NODE_TYPE, entry.path);
  // Other drop targets (a text field) get the path as plain text.
  dt.setData('text/plain', entry.path);
  dt.effectAllowed = 'move';
}

/** The dragged node's path (only readable on drop, as browsers hide drag data until then). */
export function nodePath(dt: DataTransfer): string {
  return dt.getData(NODE_TYPE);
}
