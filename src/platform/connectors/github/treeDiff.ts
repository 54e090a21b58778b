import type { KnownItem, KnownItems } from '../../runtime/connector.ts';
import type { TreeFile } from './api.ts';

/** What the sync keeps of a repository file between runs (KnownItem.meta). */
export interface FileMeta {
  kind: 'file';
  /** Its path in the synced folder of the repository. */
  path: string;
  /** Its blob's sha: an unchanged sha needs no download. */
  sha: string;
  mode: string;
}

export interface FileChange {
  sourceId: string;
  file: TreeFile;
  /** A known item at another path with the same blob: a rename at the source. */
  renamedFrom?: string;
}

export interface TreePlan {
  /** Files to download and write: new, changed, or renamed. */
  upserts: FileChange[];
  deletes: string[];
}

export function knownFiles(known: KnownItems): KnownItem[] {
  return [...known.all()].filter((k) => k.meta.kind === 'file');
}

/**
 * Compares the tree with the files the sync holds. GitHub has no file ids, so a file's source id
 * is `file:<path>` where it was first seen, and renames are recognised by content: a known file
 * whose path is gone and a new path with the same blob sha, in the same run, is one file moved.
 * (A file renamed and edited at once looks like a delete and a create.)
 */
export function planTree(files: TreeFile[], known: KnownItem[]): TreePlan {
  const byPath = new Map(known.map((k) => [String(k.meta.path), k]));
  const usedIds = new Set(known.map((k) => k.sourceId));
  const kept = new Set<string>();
  const upserts: FileChange[] = [];
  const added: TreeFile[] = [];
  for (const f of files) {
    const k = byPath.get(f.path);
    if (!k) {
      added.push(f);
      continue;
    }
    kept.add(k.sourceId);
    if (k.meta.sha !== f.sha || k.meta.mode !== f.mode || k.path !== f.path) upserts.push({ sourceId: k.sourceId, file: f });
  }
  const gone = new Map<string, KnownItem[]>();
  for (const k of known) {
    if (kept.has(k.sourceId)) continue;
    const same = gone.get(String(k.meta.sha)) ?? [];
    same.push(k);
    gone.set(String(k.meta.sha), same);
  }
  for (const f of added) {
    const moved = gone.get(f.sha)?.shift();
    if (moved) {
      upserts.push({ sourceId: moved.sourceId, file: f, renamedFrom: String(moved.meta.path) });
      continue;
    }
    upserts.push({ sourceId: newFileId(f.path, f.sha, usedIds), file: f });
  }
  const deletes = [...gone.values()].flat().map((k) => k.sourceId);
  return { upserts, deletes };
}

/** `file:<path>`, unless an item first seen there (since renamed) holds it: then with the blob sha, then a counter. */
export function newFileId(path: string, sha: string, used: Set<string>): string {
  let id = `file:${path}`;
  if (used.has(id)) id = `file:${path}@${sha.slice(0, 12)}`;
  for (let n = 2; used.has(id); n++) id = `file:${path}@${sha.slice(0, 12)}~${n}`;
  used.add(id);
  return id;
}
