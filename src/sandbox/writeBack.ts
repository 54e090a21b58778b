import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { mergeNode } from '../collab/threeWayMerge.ts';
import { ConflictError, ContentError, decodeContent, type Actor, type ContentStore, type Mutation, type NodeInfo } from '../content/contentStore.ts';
import { isSameOrInside, joinPath, normalizeTargetPath, typeFromName } from '../content/paths.ts';
import type { ChangeEntry, WritableNodeType } from '../content/types.ts';
import type { ChangeAction, FolderChanges, SkippedEntry } from './workspace/workspace.ts';

export interface WriteBackInput {
  projectId: string;
  /** The project path the workspace holds ('' = the whole project). */
  scope: string;
  /** The workspace folder the command changed. */
  dir: string;
  /** The project version the workspace was materialized at. */
  baseVersion: number;
  changes: FolderChanges;
  actor: Actor;
  message: string;
  /** The largest content the store accepts; bigger files are skipped, not written. */
  maxContentBytes: number;
}

export interface WrittenChange {
  /** Project path. */
  path: string;
  action: ChangeAction;
  type: WritableNodeType | 'folder';
  /** True when the file was merged three ways with changes made since the command started. */
  merged?: boolean;
}

export interface WriteConflict {
  path: string;
  reason: string;
  regions?: unknown;
}

export interface WriteBackResult {
  /** The project version of the write-back commit; null when nothing was written. */
  version: number | null;
  changes: WrittenChange[];
  skipped: SkippedEntry[];
  /** Non-empty when the changes could not be merged with the content as it is now: nothing was written. */
  conflicts: WriteConflict[];
}

/** How often the plan is rebuilt when another writer commits between planning and committing. */
const ATTEMPTS = 3;

/**
 * Writes what a command changed in its workspace back as ONE commit through the content store.
 * Changes made to the same nodes since the workspace was materialized are merged three ways
 * (the collab merge); a conflict anywhere writes nothing and is reported.
 */
export async function writeBack(content: ContentStore, input: WriteBackInput): Promise<WriteBackResult> {
  const files = await readChangedFiles(input);
  for (let attempt = 1; ; attempt++) {
    const plan = await planWriteBack(content, input, files);
    if (plan.conflicts.length || !plan.mutations.length) {
      return { version: null, changes: plan.conflicts.length ? [] : plan.changes, skipped: plan.skipped, conflicts: plan.conflicts };
    }
    try {
      const r = await content.commit(input.projectId, input.actor, plan.mutations, { message: input.message, guard: plan.guard });
      return { version: r.projectVersion, changes: plan.changes, skipped: plan.skipped, conflicts: [] };
    } catch (e) {
      // Another writer got in between: plan again against the content as it is now.
      if (!(e instanceof ConflictError) || attempt >= ATTEMPTS) throw e;
    }
  }
}

interface ChangedFile {
  rel: string;
  path: string;
  action: 'created' | 'modified';
  bytes: Buffer;
}

/** Reads the created and modified files once (the plan may be rebuilt); refused names and oversized files are skipped. */
async function readChangedFiles(input: WriteBackInput): Promise<{ files: ChangedFile[]; skipped: SkippedEntry[] }> {
  const files: ChangedFile[] = [];
  const skipped: SkippedEntry[] = [...input.changes.skipped];
  for (const c of input.changes.files) {
    if (c.action === 'deleted') continue;
    const path = projectPath(input.scope, c.path, skipped);
    if (path === null) continue;
    const abs = join(input.dir, c.path);
    const { size } = await stat(abs);
    if (size > input.maxContentBytes) {
      skipped.push({ path: c.path, reason: `larger than the ${input.maxContentBytes} bytes a node may hold` });
      continue;
    }
    files.push({ rel: c.path, path, action: c.action, bytes: await readFile(abs) });
  }
  return { files, skipped };
}

/** The project path of a workspace path, or null (and a skipped entry) when the content API would refuse the name. */
export function projectPath(scope: string, rel: string, skipped: SkippedEntry[]): string | null {
  try {
    return normalizeTargetPath(joinPath(scope, rel));
  } catch (e) {
    if (!(e instanceof ContentError)) throw e;
    skipped.push({ path: rel, reason: `refused by the content API: ${e.message}` });
    return null;
  }
}

interface Plan {
  mutations: Mutation[];
  changes: WrittenChange[];
  skipped: SkippedEntry[];
  conflicts: WriteConflict[];
  guard: () => void;
}

async function planWriteBack(content: ContentStore, input: WriteBackInput, read: { files: ChangedFile[]; skipped: SkippedEntry[] }): Promise<Plan> {
  const { projectId } = input;
  const head = content.projectVersion(projectId);
  const since = head > input.baseVersion ? content.changesBetween(projectId, input.baseVersion, head) : [];
  const touched = touchedPaths(since);
  const skipped = [...read.skipped];
  const conflicts: WriteConflict[] = [];
  const removals: Mutation[] = [];
  const writes: Mutation[] = [];
  const changes: WrittenChange[] = [];
  // Nodes whose state the plan relies on: the commit is refused if any changed before it is built.
  const expected: { path: string; node: NodeInfo }[] = [];
  const active = (path: string) => {
    const n = content.findByPath(projectId, path);
    return n && n.state === 'active' ? n : null;
  };

  // Deleted folders first: one trash item for the folder, not one per file inside it.
  const deletedFolders: string[] = [];
  for (const f of input.changes.folders.filter((c) => c.action === 'deleted')) {
    const path = projectPath(input.scope, f.path, skipped);
    if (path === null || deletedFolders.some((d) => isSameOrInside(path, d))) continue;
    const node = active(path);
    if (!node) continue;
    if (touched.under(path)) {
      conflicts.push({ path, reason: 'the folder was deleted by the command but its content changed meanwhile' });
      continue;
    }
    deletedFolders.push(path);
    removals.push({ op: 'remove', path });
    expected.push({ path, node });
    changes.push({ path, action: 'deleted', type: 'folder' });
  }
  for (const f of input.changes.files.filter((c) => c.action === 'deleted')) {
    const path = projectPath(input.scope, f.path, skipped);
    if (path === null || deletedFolders.some((d) => isSameOrInside(path, d))) continue;
    const node = active(path);
    if (!node) continue;
    if (touched.at(path)) {
      conflicts.push({ path, reason: 'deleted by the command but changed meanwhile' });
      continue;
    }
    removals.push({ op: 'remove', path });
    expected.push({ path, node });
    changes.push({ path, action: 'deleted', type: node.type as WritableNodeType });
  }

  for (const f of read.files) {
    const existing = active(f.path);
    if (existing?.type === 'folder') {
      conflicts.push({ path: f.path, reason: 'a folder is there now' });
      continue;
    }
    const type: WritableNodeType = existing ? (existing.type as WritableNodeType) : typeFromName(f.path);
    let value: unknown;
    try {
      value = decodeWritten(type, f.bytes);
    } catch (e) {
      skipped.push({ path: f.rel, reason: (e as Error).message });
      continue;
    }
    const change: WrittenChange = { path: f.path, action: existing && f.action === 'created' ? 'modified' : f.action, type };
    if (!existing) {
      if (f.action === 'modified') {
        conflicts.push({ path: f.path, reason: 'changed by the command but deleted or moved meanwhile' });
        continue;
      }
      writes.push({ op: 'write', path: f.path, type, content: value, baseVersion: 0 });
    } else if (!touched.at(f.path) && f.action === 'modified') {
      writes.push({ op: 'write', path: f.path, type, content: value, baseVersion: existing.version });
    } else {
      const merged = await mergeWithCurrent(content, input, existing, f, value);
      if ('conflict' in merged) {
        conflicts.push(merged.conflict);
        continue;
      }
      writes.push({ op: 'write', path: f.path, type, content: merged.value, baseVersion: existing.version });
      change.merged = true;
    }
    changes.push(change);
  }

  // Empty folders the command made (folders holding new files come with their files).
  for (const f of input.changes.folders.filter((c) => c.action === 'created')) {
    const path = projectPath(input.scope, f.path, skipped);
    if (path === null) continue;
    if (read.files.some((w) => isSameOrInside(w.path, path) && w.path !== path)) continue;
    const existing = content.findByPath(projectId, path);
    if (existing?.state === 'active') {
      if (existing.type !== 'folder') conflicts.push({ path, reason: 'a file is there now' });
      continue;
    }
    writes.push({ op: 'mkdir', path });
    changes.push({ path, action: 'created', type: 'folder' });
  }

  const guard = () => {
    for (const { path, node } of expected) {
      const now = content.findByPath(projectId, path);
      if (!now || now.id !== node.id || now.state !== 'active' || now.version !== node.version || now.contentHash !== node.contentHash) {
        throw new ConflictError(`${path} changed while the command's changes were being written`, { path });
      }
    }
  };
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { mutations: [...removals, ...writes], changes, skipped, conflicts, guard };
}

/** A file's bytes as the content of a node of `type`; throws (the file is skipped) when they cannot be. */
export function decodeWritten(type: WritableNodeType, bytes: Buffer): unknown {
  if (type !== 'json') return decodeContent(type, bytes);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error('not valid JSON: a json node keeps its content');
  }
  if (value === null || typeof value !== 'object') throw new Error('not a JSON object or array: a json node keeps its content');
  return value;
}

/** Three-way merge of the command's file with the node as it is now, against the node as the command saw it. */
async function mergeWithCurrent(
  content: ContentStore,
  input: WriteBackInput,
  current: NodeInfo,
  f: ChangedFile,
  incoming: unknown,
): Promise<{ value: unknown } | { conflict: WriteConflict }> {
  const type = current.type as WritableNodeType;
  const base = content.versionAtProjectVersion(input.projectId, { id: current.id }, input.baseVersion);
  const now = await content.readContent(input.projectId, { id: current.id });
  // Created by the command and by someone else meanwhile: the same bytes are no conflict.
  if (!base || base.path !== current.path) {
    if (now.bytes.equals(f.bytes)) return { value: incoming };
    return { conflict: { path: f.path, reason: 'created by the command and, with other content, by someone else meanwhile' } };
  }
  if (base.type !== current.type) return { conflict: { path: f.path, reason: `the node changed type from ${base.type} to ${current.type} meanwhile` } };
  const baseBytes = (await content.versionContent(input.projectId, { id: current.id }, base.version)).bytes;
  const r = mergeNode({
    type,
    base: decodeContent(type, baseBytes),
    current: decodeContent(type, now.bytes),
    incoming,
    baseVersion: base.version,
    currentVersion: current.version,
  });
  if (r.clean) return { value: r.merged };
  return { conflict: { path: f.path, reason: 'changed by the command and by someone else meanwhile, in the same places', regions: r.conflicts } };
}

/** The paths that changes after the workspace's version touched, asked at a path or beneath a folder. */
function touchedPaths(changes: ChangeEntry[]) {
  const paths = new Set<string>();
  for (const c of changes) {
    paths.add(c.path);
    if (c.oldPath) paths.add(c.oldPath);
  }
  const list = [...paths];
  return {
    /** A change at `path` or at a folder above it (a move or trash of the folder). */
    at: (path: string) => list.some((p) => isSameOrInside(path, p)),
    /** A change at, above or anywhere beneath `path`. */
    under: (path: string) => list.some((p) => isSameOrInside(path, p) || isSameOrInside(p, path)),
  };
}
