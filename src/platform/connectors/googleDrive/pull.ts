import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { FOLDER, getFile, listChanges, startPageToken, type Corpus, type DriveChange } from './api.ts';
import { driveConfig, type DriveConfig } from './config.ts';
import { parseCursor, serializeCursor, type DriveCursor } from './cursor.ts';
import { replaced, verdict, type Wanted } from './items.ts';
import { listSubtrees } from './listing.ts';
import { fetchPages } from './pages.ts';
import { FolderTree } from './tree.ts';

/**
 * The files under the sync's folder (recursively), each as a node at its folder path. A first
 * run (or one whose page token Drive no longer knows, or whose folder or `convert` changed)
 * lists the whole tree; later runs read Drive's change feed from the token the previous run
 * kept, and fetch only what changed. Drive is pull only here.
 */
export async function* pullDrive(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const config = driveConfig(ctx.config);
  const before = parseCursor(cursor);
  if (before && before.root === config.folderId && before.convert === config.convert) {
    const feed = await listChanges(ctx, { driveId: before.driveId }, before.token);
    // null: the token expired or is unknown; a full listing puts every item back where it is, under the same ids.
    if (feed) {
      yield* incremental(ctx, config, before, cursor, feed);
      return;
    }
  }
  yield* fullListing(ctx, config);
}

/**
 * Every file of the tree: the change token is taken before listing, so a change made while
 * listing is seen again by the next run rather than lost. Files already synced at the same
 * version and place are not fetched again; synced items no longer in the tree leave.
 */
async function* fullListing(ctx: ConnectorContext, config: DriveConfig): AsyncGenerator<PullPage> {
  const root = await getFile(ctx, config.folderId);
  if (root.mimeType !== FOLDER) throw new Error(`folder_id ${config.folderId} names "${root.name}", which is not a Drive folder (${root.mimeType})`);
  const corpus: Corpus = { driveId: root.driveId ?? null };
  const token = await startPageToken(ctx, corpus);
  const tree = new FolderTree(root.id);
  const files = root.trashed ? [] : await listSubtrees(ctx, corpus, tree, [root.id]);

  const wanted: Wanted[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const v = verdict(ctx, tree, file, config.convert);
    if (v.op === 'ignore' || v.op === 'delete') continue;
    seen.add(file.id);
    if (v.op === 'fetch') wanted.push(v.wanted);
  }
  const gone: SourceChange[] = [...ctx.known.all()].filter((k) => !seen.has(k.sourceId)).map((k) => ({ kind: 'delete', sourceId: k.sourceId }));
  const next: DriveCursor = { v: 1, root: root.id, driveId: corpus.driveId, convert: config.convert, token, folders: tree.folders };
  // Until the listing is complete, a run cut short must list again: no cursor.
  yield* fetchPages(ctx, gone, wanted, null, () => serializeCursor(next));
}

/**
 * The changes since the kept token. Folders first (in passes, since a new folder may come after
 * its own new subfolder in the feed): one that joined the tree from outside is listed (its files
 * were not in the feed), one that left takes its files with it, one renamed or moved moves
 * them. Then each changed file: fetched when new, edited, renamed or moved within the tree;
 * deleted when trashed, removed or moved out; ignored when outside the tree.
 */
async function* incremental(ctx: ConnectorContext, config: DriveConfig, before: DriveCursor, cursor: string | null, feed: { changes: DriveChange[]; newStartPageToken: string }): AsyncGenerator<PullPage> {
  const corpus: Corpus = { driveId: before.driveId };
  const tree = new FolderTree(before.root, { ...before.folders });
  const latest = new Map<string, DriveChange>();
  for (const c of feed.changes) if (c.changeType !== 'drive' && c.fileId) latest.set(c.fileId, c);

  const deletes: SourceChange[] = [];
  if (isGone(latest.get(before.root))) {
    // The synced folder itself was trashed or removed: everything under it leaves.
    for (const k of ctx.known.all()) deletes.push({ kind: 'delete', sourceId: k.sourceId });
    const next: DriveCursor = { ...before, token: feed.newStartPageToken, folders: {} };
    yield { changes: deletes, cursor: serializeCursor(next) };
    return;
  }

  const folderChanges = [...latest.values()].filter((c) => c.fileId !== before.root && (c.file?.mimeType === FOLDER || (c.removed && c.fileId! in tree.folders)));
  const entered = applyFolderChanges(tree, folderChanges);
  const listed = entered.length > 0 ? await listSubtrees(ctx, corpus, tree, entered) : [];

  const wanted: Wanted[] = [];
  const handled = new Set<string>();
  const consider = (v: ReturnType<typeof verdict>, id: string) => {
    handled.add(id);
    if (v.op === 'fetch') wanted.push(v.wanted);
    else if (v.op === 'delete') deletes.push({ kind: 'delete', sourceId: id });
  };
  for (const c of latest.values()) {
    if (c.file?.mimeType === FOLDER || handled.has(c.fileId!)) continue;
    if (isGone(c) || !c.file) {
      if (ctx.known.get(c.fileId!)) consider({ op: 'delete' }, c.fileId!);
      continue;
    }
    consider(verdict(ctx, tree, c.file, config.convert), c.fileId!);
  }
  for (const f of listed) if (!handled.has(f.id)) consider(verdict(ctx, tree, f, config.convert), f.id);
  // Items whose folders were renamed, moved or removed, though the files themselves did not change.
  if (folderChanges.length > 0) for (const k of ctx.known.all()) if (!handled.has(k.sourceId)) consider(replaced(tree, k, config.convert), k.sourceId);

  const next: DriveCursor = { ...before, token: feed.newStartPageToken, folders: tree.folders };
  // A run cut short starts again from the old token: what it already wrote is not fetched twice.
  yield* fetchPages(ctx, deletes, wanted, cursor, () => serializeCursor(next));
}

function isGone(c: DriveChange | undefined): boolean {
  return !!c && (c.removed === true || c.file?.trashed === true);
}

/**
 * Applies the folder changes to the tree, repeating until nothing moves (a folder's parent may
 * join the tree later in the same feed). Returns the folders that joined the tree from outside.
 */
function applyFolderChanges(tree: FolderTree, changes: DriveChange[]): string[] {
  const before = new Set(Object.keys(tree.folders).filter((id) => tree.has(id)));
  for (let pass = 0; pass <= changes.length; pass++) {
    let moved = false;
    for (const c of changes) {
      const id = c.fileId!;
      const was = tree.folders[id];
      const parent = isGone(c) || !c.file ? null : tree.parentIn(c.file.parents);
      if (parent === null) {
        if (was) {
          tree.remove(id);
          moved = true;
        }
        continue;
      }
      if (!was || was[0] !== parent || was[1] !== c.file!.name) {
        tree.set(id, parent, c.file!.name);
        moved = true;
      }
    }
    if (!moved) break;
  }
  tree.prune();
  // Those in the tree now that were not before; listing the topmost lists the others too.
  const joined = Object.keys(tree.folders).filter((id) => !before.has(id));
  const joinedSet = new Set(joined);
  return joined.filter((id) => !joinedSet.has(tree.folders[id]![0]));
}
