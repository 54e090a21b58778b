import { mergeNode } from '../collab/threeWayMerge.ts';
import type { ContentStore, NodeType, PlannedChange, PlannedCommit } from '../content/contentStore.ts';
import { isJsonDocument } from '../content/encoding.ts';
import { parseCatFileBatch } from '../content/git/gitCli.ts';
import { isTrashPath, PLACEHOLDER, TRASH_DIR, typeFromName } from '../content/paths.ts';
import { FOR_MAIN_REF } from './pushRules.ts';
import { runGit } from './runGit.ts';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const TREE_MODE = '040000';

/** A push to refs/for/main that cannot be merged: the paths both sides changed differently. */
export class MergeRefused extends Error {
  constructor(
    message: string,
    readonly paths: string[],
  ) {
    super(message);
  }
}

interface Change {
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  path: string;
}

const ZERO = /^0+$/;
const present = (mode: string) => !ZERO.test(mode);

/**
 * Plans the three-way merge of a pushed commit into main at `tip`: the changes the pushed side
 * made since the merge base, applied where main left the path as it was at the base; where both
 * changed a path, markdown and json merge by content (src/collab), otherwise the path is a
 * conflict and the merge is refused (MergeRefused names the paths). Renames are paired by blob
 * id (node ids and histories follow), moves into or out of `.trash` become trash and restore.
 */
export async function planPushMerge(store: ContentStore, projectId: string, gitdir: string, tip: string | null, pushed: string): Promise<PlannedCommit | null> {
  const git = (args: string[], input?: string, okCodes: number[] = []) => runGit(args, { gitdir, input, okCodes });
  let base: string = EMPTY_TREE;
  if (tip) {
    const mb = await git(['merge-base', tip, pushed], undefined, [1]);
    const found = mb.stdout.toString('latin1').trim();
    if (mb.code !== 0 || !found) throw new MergeRefused('the pushed commit shares no history with main: fetch main and build on it.', []);
    if (found === pushed) return null; // already in main
    base = found;
  }
  const diff = async (a: string, b: string) => parseRaw((await git(['diff-tree', '-r', '-t', '-z', '--raw', '--no-renames', a, b])).stdout);
  const theirs = await diff(base, pushed);
  const ours = tip ? new Map((await diff(base, tip)).map((c) => [c.path, c] as const)) : new Map<string, Change>();
  const oursUnder = (p: string) => ours.has(p) || [...ours.keys()].some((k) => k.startsWith(p + '/'));

  const changes: PlannedChange[] = [];
  const conflicts: string[] = [];
  const blobs = new Map<string, Buffer>();
  const wanted = new Set<string>();
  const theirPaths = new Set(theirs.map((c) => c.path));
  for (const c of theirs) if (present(c.newMode) && c.newMode !== TREE_MODE) wanted.add(c.newOid);
  for (const c of ours.values()) if (present(c.newMode) && c.newMode !== TREE_MODE && theirPaths.has(c.path)) wanted.add(c.newOid);
  for (const c of theirs) if (present(c.oldMode) && c.oldMode !== TREE_MODE && ours.has(c.path)) wanted.add(c.oldOid);
  const read = [...wanted];
  for (let i = 0; i < read.length; i += 64) {
    const objects = parseCatFileBatch((await git(['cat-file', '--batch'], read.slice(i, i + 64).join('\n') + '\n')).stdout);
    for (const [oid, o] of objects) blobs.set(oid, Buffer.from(o.content));
  }

  // Whole folders: renamed (same tree id on both sides) or removed, where main changed nothing.
  const dirDone: string[] = [];
  const under = (p: string) => dirDone.some((d) => p.startsWith(d + '/'));
  const addedTrees = theirs.filter((c) => c.newMode === TREE_MODE && !present(c.oldMode));
  const removedDirs: string[] = [];
  for (const c of theirs) {
    if (c.oldMode !== TREE_MODE || present(c.newMode) || c.path === TRASH_DIR || under(c.path) || oursUnder(c.path)) continue;
    const to = addedTrees.find((a) => a.newOid === c.oldOid && !under(a.path) && !oursUnder(a.path) && !dirDone.includes(a.path));
    if (to) {
      if (isTrashPath(to.path) && !isTrashPath(c.path)) changes.push({ op: 'remove', path: c.path, permanent: false });
      else if (isTrashPath(c.path) && !isTrashPath(to.path)) changes.push({ op: 'restore', trashPath: topTrashItem(c.path), to: to.path });
      else changes.push({ op: 'move', from: c.path, to: to.path });
      dirDone.push(c.path, to.path);
    } else {
      removedDirs.push(c.path);
      dirDone.push(c.path);
    }
  }
  const inRemovedDir = under;

  // Renames: a removed and an added path with the same blob.
  const files = theirs.filter((c) => c.oldMode !== TREE_MODE && c.newMode !== TREE_MODE && !`/${c.path}/`.includes(`/${PLACEHOLDER}/`));
  const added = new Map<string, Change[]>();
  for (const c of files) if (!present(c.oldMode)) added.set(c.newOid, [...(added.get(c.newOid) ?? []), c]);
  const handled = new Set<string>();
  for (const c of files) {
    if (present(c.newMode) || inRemovedDir(c.path)) continue;
    const to = added.get(c.oldOid)?.find((a) => !handled.has(a.path));
    if (!to || ours.has(c.path) || ours.has(to.path)) continue;
    handled.add(c.path).add(to.path);
    if (isTrashPath(to.path) && !isTrashPath(c.path)) changes.push({ op: 'remove', path: c.path, permanent: false });
    else if (isTrashPath(c.path) && !isTrashPath(to.path)) changes.push({ op: 'restore', trashPath: topTrashItem(c.path), to: to.path });
    else changes.push({ op: 'move', from: c.path, to: to.path });
  }

  for (const c of theirs) {
    if (handled.has(c.path) || inRemovedDir(c.path)) continue;
    if (c.oldMode === TREE_MODE || c.newMode === TREE_MODE) continue;
    if (`/${c.path}/`.includes(`/${PLACEHOLDER}/`)) {
      // An empty folder the pushed side made.
      const dir = c.path.slice(0, -(PLACEHOLDER.length + 1));
      if (present(c.newMode) && dir !== '' && !isTrashPath(dir)) changes.push({ op: 'mkdir', path: dir });
      continue;
    }
    const mine = ours.get(c.path);
    if (!present(c.newMode)) {
      if (!mine) changes.push({ op: 'remove', path: c.path, permanent: true });
      else if (present(mine.newMode)) conflicts.push(`${c.path} (deleted in the push, changed in main)`);
      continue;
    }
    if (!mine) {
      changes.push(write(store, projectId, c.path, c.newOid, blobs));
      continue;
    }
    if (mine.newOid === c.newOid) continue;
    if (!present(mine.newMode)) {
      conflicts.push(`${c.path} (changed in the push, deleted in main)`);
      continue;
    }
    if (!present(c.oldMode)) {
      conflicts.push(`${c.path} (added in the push and in main with different content)`);
      continue;
    }
    const merged = mergeContent(store, projectId, c.path, blobs.get(c.oldOid)!, blobs.get(mine.newOid)!, blobs.get(c.newOid)!);
    if (merged) changes.push({ ...merged, path: c.path });
    else conflicts.push(`${c.path} (changed in the push and in main)`);
  }
  for (const d of removedDirs) changes.push({ op: 'remove', path: d, permanent: true });
  if (conflicts.length > 0) throw new MergeRefused(`conflict: ${conflicts.length} path(s) changed in the push and in main`, conflicts);
  if (changes.length === 0) return null;
  const subject = (await git(['log', '-1', '--format=%s', pushed])).stdout.toString('utf8').trim();
  return { message: `Merge ${pushed.slice(0, 12)} pushed to ${FOR_MAIN_REF}: ${subject}`, parents: [pushed], changes };
}

/** A pushed blob as a write: an existing node keeps its type while the content fits it. */
function write(store: ContentStore, projectId: string, path: string, oid: string, blobs: Map<string, Buffer>): PlannedChange {
  const bytes = blobs.get(oid)!;
  return { op: 'write', path, type: typeFor(store.findByPath(projectId, path)?.type, path, bytes), blobId: oid, size: bytes.length };
}

function typeFor(current: NodeType | undefined, path: string, bytes: Buffer): Exclude<NodeType, 'folder'> {
  const json = isJsonDocument(bytes);
  let text = true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = false;
  }
  if (current === 'json' && json) return 'json';
  if (current === 'markdown' && text) return 'markdown';
  if (current === 'file') return 'file';
  const named = typeFromName(path);
  if (named === 'json') return json ? 'json' : 'file';
  if (named === 'markdown') return text ? 'markdown' : 'file';
  return 'file';
}

/** Both sides changed a file: markdown and json merge by content (src/collab); files do not. */
function mergeContent(store: ContentStore, projectId: string, path: string, base: Buffer, current: Buffer, incoming: Buffer): Extract<PlannedChange, { op: 'write' }> | null {
  const type = typeFor(store.findByPath(projectId, path)?.type, path, current);
  const decode = (b: Buffer): unknown => (type === 'json' ? JSON.parse(b.toString('utf8')) : type === 'markdown' ? b.toString('utf8') : b);
  let sides: [unknown, unknown, unknown];
  try {
    sides = [decode(base), decode(current), decode(incoming)];
  } catch {
    return null;
  }
  const r = mergeNode({ type, base: sides[0], current: sides[1], incoming: sides[2], baseVersion: 0, currentVersion: 0 });
  if (!r.clean) return null;
  const bytes =
    type === 'json' ? Buffer.from(JSON.stringify(r.merged, null, 2) + '\n', 'utf8') : type === 'markdown' ? Buffer.from(r.merged as string, 'utf8') : Buffer.from(r.merged as Uint8Array);
  return { op: 'write', path, type, bytes };
}

/** `.trash/<id>_<name>/inner/path` → `.trash/<id>_<name>` (what restore takes). */
function topTrashItem(path: string): string {
  return path.split('/').slice(0, 2).join('/');
}

function parseRaw(buf: Buffer): Change[] {
  const out: Change[] = [];
  const parts = buf.toString('utf8').split('\0');
  for (let i = 0; i < parts.length; i++) {
    const t = parts[i]!;
    if (!t.startsWith(':')) continue;
    const [oldMode, newMode, oldOid, newOid] = t.slice(1).split(' ');
    out.push({ oldMode: oldMode!, newMode: newMode!, oldOid: oldOid!, newOid: newOid!, path: parts[++i]! });
  }
  return out;
}
