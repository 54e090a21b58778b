import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { commitMerge } from '../collab/commitMerge.ts';
import { seenAt, type IncomingChange, type Seen, type Wording } from '../collab/mergeChanges.ts';
import { writeTypeOf } from '../commands/writeNode.ts';
import { ContentError, decodeContent, type Actor, type ContentStore } from '../content/contentStore.ts';
import { encodeContent } from '../content/encoding.ts';
import { joinPath, normalizeTargetPath } from '../content/paths.ts';
import type { WritableNodeType } from '../content/types.ts';
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
  /**
   * Asks the policy, as it stands when the changes are written, whether the run may write these
   * project paths; it throws (a domain error) when not, and nothing is written. It runs inside
   * the project's serialized section, before the commit, so nothing written before the answer
   * changes it (it may read the metadata store: the section awaits it).
   */
  authorize: (paths: readonly string[]) => void | Promise<void>;
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

/** How the sandbox tells why a change of the command could not be written (the shared merge decides). */
const sandboxWording: Wording = (s) => {
  switch (s.is) {
    case 'removed-replaced':
      return 'deleted by the command, but another node is there now';
    case 'removed-changed':
      return s.folder ? 'the folder was deleted by the command but its content changed meanwhile' : 'deleted by the command but changed meanwhile';
    case 'blocked':
      return `${s.at} is a file now, where the command has a folder`;
    case 'kind-replaced':
      return s.mine === 'file' ? 'a folder is there now' : 'a file is there now';
    case 'gone':
      return 'changed by the command but deleted or moved meanwhile';
    case 'both-created':
      return 'created by the command and, with other content, by someone else meanwhile';
    case 'other-node':
      return 'changed by the command, but another node is there now';
    case 'type-changed':
      return `the node changed type from ${s.from} to ${s.to} meanwhile`;
    case 'clash':
      return 'changed by the command and by someone else meanwhile, in the same places';
  }
};

/**
 * Writes what a command changed in its workspace back as ONE commit through the content store,
 * each path a change against what the workspace held there (the project at `baseVersion`): the
 * shared merge (src/collab/mergeChanges.ts) plans them against the tip inside the project's
 * serialized section, three-way merging what was changed meanwhile; a conflict anywhere writes
 * nothing and is reported. The run's right to write is asked there too (`authorize`).
 */
export async function writeBack(content: ContentStore, input: WriteBackInput): Promise<WriteBackResult> {
  const { projectId, baseVersion: at } = input;
  const read = await readChangedFiles(input);
  const paths = (entries: readonly { path: string; action: ChangeAction }[], action: ChangeAction) =>
    entries.filter((e) => e.action === action).flatMap((e) => projectPath(input.scope, e.path, read.skipped) ?? []);
  const deletedFolders = paths(input.changes.folders, 'deleted');
  const deletedFiles = paths(input.changes.files, 'deleted');
  const createdFolders = paths(input.changes.folders, 'created');
  const nothing = { version: null, changes: [], conflicts: [] };
  if (deletedFolders.length + deletedFiles.length + createdFolders.length + read.files.length === 0) return { ...nothing, skipped: read.skipped };

  // Asked in the serialized section: a file's type is the node's there now (asked afresh should main move under the plan).
  let incoming: IncomingChange[] = [];
  let skipped: SkippedEntry[] = [];
  const nothingThen: Seen = { nodeId: null, version: null, projectVersion: at };
  const changes = async (): Promise<IncomingChange[]> => {
    skipped = [...read.skipped];
    incoming = [
      ...deletedFolders.map((path): IncomingChange => ({ op: 'remove', path, type: 'folder', seen: seenAt(content, projectId, path, at) })),
      ...deletedFiles.map((path): IncomingChange => ({ op: 'remove', path, seen: seenAt(content, projectId, path, at) })),
    ];
    for (const f of read.files) {
      const type = writeTypeOf(content, projectId, f.path);
      let bytes: Buffer;
      try {
        bytes = asStored(type, f.bytes);
      } catch (e) {
        skipped.push({ path: f.rel, reason: (e as Error).message });
        continue;
      }
      incoming.push({ op: 'write', path: f.path, type, bytes, seen: f.action === 'created' ? nothingThen : seenAt(content, projectId, f.path, at) });
    }
    incoming.push(...createdFolders.map((path): IncomingChange => ({ op: 'mkdir', path, seen: nothingThen })));
    if (incoming.length) await input.authorize(incoming.map((c) => c.path));
    return incoming;
  };
  const { plan, result } = await commitMerge(content, projectId, input.actor, { message: input.message, wording: sandboxWording, changes });
  if (plan.conflicts.length) {
    return { ...nothing, skipped, conflicts: plan.conflicts.map((c) => ({ path: c.path, reason: c.reason, ...(c.situation === 'clash' ? { regions: c.regions } : {}) })) };
  }
  const written: WrittenChange[] = [];
  for (const [i, o] of plan.outcomes.entries()) {
    if (!o) continue;
    written.push({ path: incoming[i]!.path, action: o.action === 'updated' ? 'modified' : o.action, type: o.type, ...(o.merged ? { merged: true } : {}) });
  }
  written.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { version: result?.projectVersion ?? null, changes: written, skipped, conflicts: [] };
}

interface ChangedFile {
  rel: string;
  path: string;
  action: 'created' | 'modified';
  bytes: Buffer;
}

/** Reads the created and modified files (before the serialized section); refused names and oversized files are skipped. */
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

/** A file's bytes as a node of `type` stores them (json in its canonical form); throws like decodeWritten. */
export function asStored(type: WritableNodeType, bytes: Buffer): Buffer {
  return encodeContent(type, decodeWritten(type, bytes));
}
