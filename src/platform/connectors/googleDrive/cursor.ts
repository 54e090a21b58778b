/**
 * The cursor of a Drive sync: the change feed's token, and the folder tree under the synced
 * folder as of that token. A change names a file's parents, not its path: the tree turns them
 * into paths, and tells whether a changed file is inside the synced folder at all.
 */
export interface DriveCursor {
  v: 1;
  /** The synced folder (a new `folder_id` means a full listing). */
  root: string;
  /** Its shared drive, or null for the user's own corpus. */
  driveId: string | null;
  /** Whether the items were made with `convert` on (a change of the setting means a full listing). */
  convert: boolean;
  /** `changes.list`'s token, from `getStartPageToken` or the last `newStartPageToken`. */
  token: string;
  /** Every folder below the root: id → [parent id, name]. */
  folders: Record<string, [string, string]>;
}

export function parseCursor(cursor: string | null): DriveCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<DriveCursor>;
    if (c.v !== 1 || typeof c.root !== 'string' || typeof c.token !== 'string' || !c.folders || typeof c.folders !== 'object') return null;
    const folders: Record<string, [string, string]> = {};
    for (const [id, f] of Object.entries(c.folders)) if (Array.isArray(f) && typeof f[0] === 'string' && typeof f[1] === 'string') folders[id] = [f[0], f[1]];
    return { v: 1, root: c.root, driveId: typeof c.driveId === 'string' ? c.driveId : null, convert: c.convert === true, token: c.token, folders };
  } catch {
    // An unreadable cursor means a full listing (which keeps every item's node), never a failed sync.
    return null;
  }
}

export function serializeCursor(c: DriveCursor): string {
  return JSON.stringify(c);
}
