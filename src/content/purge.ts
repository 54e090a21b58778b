import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConflictError, NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import { parseCatFileBatch, runGitCli } from './git/gitCli.ts';
import { NOTES_REF, serializeTree, type NotesDraft, Notes } from './git/notes.ts';
import { casRef, readRef } from './git/refs.ts';
import type { Repo, TreeEntryRaw } from './git/repo.ts';
import { PLACEHOLDER } from './paths.ts';
import { EMPTY_BLOB, TREE_MODE } from './tree.ts';
import { CNS_LINE, NODE_LINE, parseMessage, parseNote, type NodeChange } from './trailers.ts';

/** Old commit ids of rewritten history, one per line: a push that brings one back is refused. */
export const RETIRED_FILE = 'cns-retired-commits';

export interface PurgeResult {
  before: string;
  after: string;
  /** Commits whose id changed. */
  rewritten: number;
  /** Ids of the nodes that were at the path at some time (their versions are gone). */
  nodes: string[];
  /** New id of every rewritten commit, by old id. */
  renamed: Map<string, string>;
}

interface RawCommit {
  id: string;
  parents: string[];
  raw: Buffer;
}

const PURGED = '[purged]';

/**
 * Rewrites the history of `main` without `path`: every commit loses what was at the path (a
 * file, or a folder with everything in it) and wherever the nodes that were at the path went
 * later (moves, the trash); the trailers and notes lose their lines for those nodes and the
 * path in commit messages reads `[purged]`. Commits that did not contain any of it keep their
 * ids; all others are rewritten in order with the same authors, times and trailers, so a
 * rebuild gives every other node the same id and versions. The old commit ids are recorded
 * (pushes built on them are refused) and the old objects are deleted (repack, prune). Must run
 * with the project's writes held; the caller rebuilds the index afterwards.
 */
export async function purgeHistory(repo: Repo, gitBinary: string | null, path: string): Promise<PurgeResult> {
  if (!gitBinary) throw new ValidationError('purging needs the git program on the server');
  const git = (args: string[], input?: string) => runGitCli(gitBinary, repo.gitdir, args, input);
  const tip = repo.readMain();
  if (!tip) throw new NotFoundError(`no history contains ${path}`, { path });

  // Every commit reachable from main, parents first, and the first-parent chain.
  const all: RawCommit[] = [];
  const listing = (await git(['rev-list', '--topo-order', '--reverse', '--parents', tip])).toString('latin1').trim().split('\n');
  const firstParent = new Set((await git(['rev-list', '--first-parent', tip])).toString('latin1').trim().split('\n'));
  for (let i = 0; i < listing.length; i += 2000) {
    const part = listing.slice(i, i + 2000).map((l) => l.split(' '));
    const objects = parseCatFileBatch(await git(['cat-file', '--batch'], part.map((p) => p[0]).join('\n') + '\n'));
    for (const [id, ...parents] of part) all.push({ id: id!, parents, raw: Buffer.from(objects.get(id!)!.content) });
  }

  // What each commit did to nodes: its trailers, else its note (commits pushed with git).
  const notes = new Notes(repo);
  const noteTexts = await notes.read(all.filter((c) => !parseMessage(message(c.raw))).map((c) => c.id));
  const changesOf = (c: RawCommit): NodeChange[] => {
    const p = parseMessage(message(c.raw));
    if (p) return p.changes;
    const text = noteTexts.get(c.id);
    return (text && parseNote(text)?.changes) || [];
  };
  const inside = (p: string) => p === path || p.startsWith(path + '/');
  const purged = new Set<string>();
  for (const c of all) for (const ch of changesOf(c)) if (inside(ch.path) || (ch.fromPath !== undefined && inside(ch.fromPath))) purged.add(ch.id);

  // Paths to remove per commit: the path itself, and where the purged nodes are at that commit.
  const where = new Map<string, string>();
  const everywhere = new Set<string>([path]);
  const removals = new Map<string, string[]>();
  for (const c of all) {
    if (!firstParent.has(c.id)) continue;
    for (const ch of changesOf(c)) {
      if (!purged.has(ch.id)) continue;
      if (ch.op === 'delete') where.delete(ch.id);
      else where.set(ch.id, ch.path);
      everywhere.add(ch.path);
    }
    removals.set(c.id, [path, ...where.values()]);
  }

  // Rewrite trees (memoized by tree and removal set) and commits, parents first.
  const memo = new Map<string, string>();
  const rewriteTree = async (oid: string, remove: string[], root: boolean): Promise<string> => {
    if (remove.length === 0) return oid;
    const key = `${oid}\0${remove.join('\0')}`;
    const known = memo.get(key);
    if (known) return known;
    const entries: TreeEntryRaw[] = [];
    let changed = false;
    for (const e of await repo.readTree(oid)) {
      if (remove.includes(e.name)) {
        changed = true;
        continue;
      }
      const below = remove.filter((r) => r.startsWith(e.name + '/')).map((r) => r.slice(e.name.length + 1));
      if (e.mode === TREE_MODE && below.length > 0) {
        const next = await rewriteTree(e.oid, below, false);
        if (next !== e.oid) changed = true;
        entries.push({ ...e, oid: next });
      } else entries.push(e);
    }
    // A folder emptied by the purge stays a folder (other nodes may be its children later).
    if (entries.length === 0 && !root) entries.push({ mode: '100644', name: PLACEHOLDER, oid: EMPTY_BLOB });
    const out = changed ? repo.writeObject('tree', serializeTree(entries)) : oid;
    memo.set(key, out);
    return out;
  };
  const renamed = new Map<string, string>();
  let rewritten = 0;
  for (const c of all) {
    const remove = [...new Set(removals.get(c.id) ?? everywhere)].sort();
    const head = c.raw.subarray(0, c.raw.indexOf('\n\n'));
    const oldTree = /^tree ([0-9a-f]{40})$/m.exec(head.toString('latin1'))![1]!;
    const tree = await rewriteTree(oldTree, remove, true);
    const parents = c.parents.map((p) => renamed.get(p) ?? p);
    const text = cleanText(message(c.raw), everywhere, purged);
    if (tree === oldTree && parents.every((p, i) => p === c.parents[i]) && text === message(c.raw)) continue;
    const headers = head
      .toString('utf8')
      .split('\n')
      .filter((l) => !l.startsWith('tree ') && !l.startsWith('parent '));
    // Signatures would no longer match: dropped (continuation lines start with a space).
    const kept = dropSignatures(headers);
    const body = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), ...kept].join('\n') + '\n\n' + text;
    renamed.set(c.id, repo.writeObject('commit', Buffer.from(body, 'utf8')));
    rewritten++;
  }
  const after = renamed.get(tip) ?? tip;
  if (after === tip) return { before: tip, after, rewritten: 0, nodes: [...purged], renamed };

  // Notes move to the new commit ids (without the purged nodes' lines), in a history of their own.
  const fresh: NotesDraft = new Notes(repo).fresh();
  for (const [old, text] of noteTexts) fresh.add(renamed.get(old) ?? old, cleanText(text, everywhere, purged, true));
  const oldNotes = readRef(repo.gitdir, NOTES_REF);

  fresh.commit('cns: index notes (history rewritten by a purge)');
  const cas = repo.casMain(tip, after);
  if (cas !== 'ok') {
    const newNotes = readRef(repo.gitdir, NOTES_REF);
    if (oldNotes && newNotes) casRef(repo.gitdir, NOTES_REF, newNotes, oldNotes, repo.durable);
    throw new ConflictError('main moved while the history was rewritten (a push arrived); nothing was purged, try again');
  }
  // From now on pushes that bring back old commits are refused. Written in the same turn of the
  // event loop as the ref move, so no push check (an HTTP request to this process) runs between.
  appendFileSync(join(repo.gitdir, RETIRED_FILE), [...renamed.keys()].join('\n') + '\n');
  repo.dropCache();
  // The old objects go: nothing references them any more (no reflogs in the served repositories).
  await git(['-c', 'gc.auto=0', 'reflog', 'expire', '--expire=now', '--all']);
  await git(['-c', 'repack.writeBitmaps=true', 'repack', '-a', '-d', '-q']);
  await git(['prune', '--expire=now']);
  repo.dropCache();
  return { before: tip, after, rewritten, nodes: [...purged], renamed };
}

/** Old commit ids retired by purges of the repository. */
export function retiredCommits(gitdir: string): Set<string> {
  try {
    return new Set(readFileSync(join(gitdir, RETIRED_FILE), 'latin1').split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l)));
  } catch {
    return new Set();
  }
}

function message(raw: Buffer): string {
  const i = raw.indexOf('\n\n');
  return i < 0 ? '' : raw.toString('utf8', i + 2);
}

/** Drops the lines of purged nodes; their paths read `[purged]` in the free text. */
function cleanText(text: string, paths: Set<string>, purged: Set<string>, note = false): string {
  const lines = text.split('\n').filter((l) => {
    const m = NODE_LINE.exec(l);
    return !(m && purged.has(m[1]!));
  });
  // The path as a word of its own (`write docs/secret.md`), not inside other names.
  const escaped = [...paths].sort((a, b) => b.length - a.length).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const word = new RegExp(`(?<=^|[\\s"'(\\[])(?:${escaped.join('|')})(?=$|[\\s"')\\],:;/])`, 'g');
  return lines.map((l) => (note || CNS_LINE.test(l) ? l : l.replace(word, PURGED))).join('\n');
}

function dropSignatures(headers: string[]): string[] {
  const out: string[] = [];
  let inSig = false;
  for (const h of headers) {
    if (h.startsWith('gpgsig') || h.startsWith('gpgsig-sha256')) {
      inSig = true;
      continue;
    }
    if (inSig && h.startsWith(' ')) continue;
    inSig = false;
    out.push(h);
  }
  return out;
}
