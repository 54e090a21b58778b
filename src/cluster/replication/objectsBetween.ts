import { parseTree, type Repo, type TreeEntryRaw } from '../../content/git/repo.ts';
import { parseCommit } from '../../content/git/commitObject.ts';
import type { ShippedObject } from './shipment.ts';

/** Past this many objects, or bytes of them, a step is not shipped: the replica fetches it with git instead. */
export const SHIP_MAX_OBJECTS = 5_000;
export const SHIP_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The objects a copy whose ref is at `old` lacks to reach `next`, when `next` is `old` followed
 * by a chain of single-parent commits (every write through the content core); null otherwise (a
 * merge, a rewritten history, more than `max` objects), and the copy catches up by `git fetch`.
 * Everything reachable from `old` is on the copy, so only the trees and blobs that differ from a
 * commit's parent at the same path are new.
 */
export async function objectsBetween(repo: Repo, old: string | null, next: string, max = SHIP_MAX_OBJECTS): Promise<ShippedObject[] | null> {
  const chain: { oid: string; content: Buffer; tree: string; parent: string | null }[] = [];
  for (let c: string | null = next; c !== old; ) {
    if (c === null) return null; // `old` is not on next's first-parent chain
    const o = await repo.readObject(c);
    if (o.type !== 'commit') return null;
    const commit = parseCommit(o.content);
    if (commit.parents.length > 1) return null;
    const parent = commit.parents[0] ?? null;
    chain.push({ oid: c, content: o.content, tree: commit.tree, parent });
    if (chain.length > max) return null;
    c = parent;
  }
  const out: ShippedObject[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  const add = (o: ShippedObject, oid: string) => {
    if (seen.has(oid)) return;
    seen.add(oid);
    out.push(o);
    bytes += o.content.length;
  };
  let parentTree: string | null = null;
  if (chain.length > 0 && chain[chain.length - 1]!.parent !== null) {
    parentTree = parseCommit((await repo.readObject(chain[chain.length - 1]!.parent!)).content).tree;
  }
  for (const step of chain.reverse()) {
    if (!(await newTrees(repo, parentTree, step.tree, add, max))) return null;
    add({ type: 'commit', content: step.content }, step.oid);
    parentTree = step.tree;
    if (out.length > max || bytes > SHIP_MAX_BYTES) return null;
  }
  return out;
}

/** Adds tree `b` and what under it differs from tree `a`; false past `max` objects. */
async function newTrees(repo: Repo, a: string | null, b: string, add: (o: ShippedObject, oid: string) => void, max: number, count = { n: 0 }): Promise<boolean> {
  if (a === b) return true;
  const o = await repo.readObject(b);
  add(o, b);
  const before = new Map<string, TreeEntryRaw>();
  if (a !== null) for (const e of await repo.readTree(a)) before.set(e.name, e);
  for (const e of parseTree(o.content)) {
    const was = before.get(e.name);
    if (was?.oid === e.oid) continue;
    if (++count.n > max) return false;
    if (e.mode === '40000') {
      if (!(await newTrees(repo, was?.mode === '40000' ? was.oid : null, e.oid, add, max, count))) return false;
    } else if (e.mode !== '160000') {
      add(await repo.readObject(e.oid), e.oid);
    }
  }
  return true;
}

