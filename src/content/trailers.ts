import type { Actor, NodeType, Operation } from './types.ts';

/**
 * What one commit did to one node. The live path and the rebuild from git both apply these
 * through CommitApplier, so the index rebuilt from trailers matches the live one by construction.
 */
export interface NodeChange {
  id: string;
  type: NodeType;
  op: Operation;
  /** Parent folder id after the change; null at the root and for top-level trash items. */
  parentId: string | null;
  /** Path after the change (for 'delete': the path it was deleted from). */
  path: string;
  /** Blob id after the change; null for folders. */
  blobId: string | null;
  size: number;
  /** Path before the change, when the node moved. */
  fromPath?: string;
  /** Version after the change (filled in when applied). */
  version?: number;
}

/*
 * Trailer format (last paragraph of every commit this store makes):
 *
 *   Cns-Actor: <actor type> <actor id> <author text>
 *   Cns-<Key>: <value>                             (a caller's own lines, CommitOptions.trailers)
 *   Cns-Node: <node id> <version> <type> <operation> <parent id|-> <size> <blob id|-> <path>
 *   Cns-From: <node id> <previous path>            (only for nodes that moved)
 *
 * Paths come last so they may contain spaces; ids, types and numbers never do. Descendants of a
 * moved or trashed folder have no line of their own: they follow their parent by id.
 */

/** The trailer keys the store writes: a line starting with one of them (any case, as git reads trailers) is the store's. */
export const TRAILER_KEY_LINE = /^[ \t]*(cns-actor|cns-node|cns-from)[ \t]*:/im;
/** Any line of the store's own (trailers and note lines all start with `Cns-`). */
export const CNS_LINE = /^Cns-/;
/** A `Cns-Node` or `Cns-From` line, capturing the node id. */
export const NODE_LINE = /^Cns-(?:Node|From): (\S+) /;

/** A caller's own trailer line (CommitOptions.trailers): a `Cns-` key of its own and a one-line value. */
const EXTRA_LINE = /^Cns-(?!Actor:|Node:|From:)[A-Z][A-Za-z-]*: [^\r\n]+$/;

/** Throws unless every line is a trailer line a caller may add. */
export function checkTrailers(lines: readonly string[]): void {
  for (const l of lines) if (!EXTRA_LINE.test(l)) throw new Error(`not a trailer line a caller may add: ${JSON.stringify(l)}`);
}

/** The value of the first `key:` line a caller added to a commit's trailer block, or null. */
export function trailerValue(full: string, key: string): string | null {
  const line = parseMessage(full)?.extra.find((l) => l.startsWith(`${key}: `));
  return line === undefined ? null : line.slice(key.length + 2);
}

export function formatMessage(message: string, actor: Actor, changes: NodeChange[], extra: readonly string[] = []): string {
  checkTrailers(extra);
  const lines = [`Cns-Actor: ${actor.type} ${oneWord(actor.id)} ${oneLine(actor.author)}`, ...extra];
  for (const c of changes) {
    lines.push(
      `Cns-Node: ${c.id} ${c.version ?? 0} ${c.type} ${c.op} ${c.parentId ?? '-'} ${c.size} ${c.blobId ?? '-'} ${c.path}`,
    );
    if (c.fromPath !== undefined) lines.push(`Cns-From: ${c.id} ${c.fromPath}`);
  }
  return `${cleanMessage(message)}\n\n${lines.join('\n')}\n`;
}

export interface ParsedMessage {
  message: string;
  actor: Actor;
  changes: NodeChange[];
  /** The block's other lines (CommitOptions.trailers), as written. */
  extra: string[];
}

/** Reads the trailers of a commit made by this store; null for commits without them. */
export function parseMessage(full: string): ParsedMessage | null {
  const text = full.replace(/\n+$/, '');
  const cut = text.lastIndexOf('\n\n');
  const block = cut < 0 ? text : text.slice(cut + 2);
  if (!block.startsWith('Cns-Actor: ')) return null;
  const lines = block.split('\n');
  const actor = parseActor(lines[0]);
  if (!actor) return null;
  const extra = lines.slice(1).filter((l) => !/^Cns-(Node|From): /.test(l));
  return { message: cut < 0 ? '' : text.slice(0, cut), actor, changes: parseNodeLines(lines.slice(1)), extra };
}

function parseActor(line: string): Actor | null {
  const a = /^Cns-Actor: (user|agent|sync) (\S+) (.*)$/.exec(line);
  return a ? { type: a[1] as Actor['type'], id: a[2], author: a[3] } : null;
}

/** `Cns-Node` and `Cns-From` lines (other lines are skipped). */
function parseNodeLines(lines: string[]): NodeChange[] {
  const changes: NodeChange[] = [];
  const byId = new Map<string, NodeChange>();
  for (const line of lines) {
    let m = /^Cns-Node: (\S+) (\d+) (folder|json|markdown|file) (\w+) (\S+) (\d+) (\S+) (.*)$/.exec(line);
    if (m) {
      const c: NodeChange = {
        id: m[1],
        version: Number(m[2]),
        type: m[3] as NodeType,
        op: m[4] as Operation,
        parentId: m[5] === '-' ? null : m[5],
        size: Number(m[6]),
        blobId: m[7] === '-' ? null : m[7],
        path: m[8],
      };
      changes.push(c);
      byId.set(c.id, c);
      continue;
    }
    m = /^Cns-From: (\S+) (.*)$/.exec(line);
    if (m && byId.has(m[1])) byId.get(m[1])!.fromPath = m[2];
  }
  return changes;
}

/*
 * Notes (`refs/notes/cns`, one note per commit that has no trailers, i.e. pushed with git):
 * what indexing that commit decided, so that a rebuild from git reproduces it exactly (node ids
 * of pushed files, the pusher as actor, the arrival time, the push's audit entry).
 *
 *   Cns-Actor: <actor type> <actor id> <author text>
 *   Cns-Time: <ISO 8601 time of the versions>
 *   Cns-Push: <before|-> <after> <commits>          (on the tip commit of a push only)
 *   Cns-Authored-By: <the commit's author>          (when it is not the actor)
 *   Cns-Node: ... / Cns-From: ...                   (as in trailers)
 */

export interface PushRecord {
  before: string | null;
  after: string;
  commits: number;
}

export interface ParsedNote {
  actor: Actor;
  time: string;
  push: PushRecord | null;
  changes: NodeChange[];
}

export function formatNote(note: ParsedNote): string {
  const { actor } = note;
  const lines = [`Cns-Actor: ${actor.type} ${oneWord(actor.id)} ${oneLine(actor.author)}`, `Cns-Time: ${note.time}`];
  if (note.push) lines.push(`Cns-Push: ${note.push.before ?? '-'} ${note.push.after} ${note.push.commits}`);
  if (actor.commitAuthor) lines.push(`Cns-Authored-By: ${oneLine(actor.commitAuthor)}`);
  for (const c of note.changes) {
    lines.push(`Cns-Node: ${c.id} ${c.version ?? 0} ${c.type} ${c.op} ${c.parentId ?? '-'} ${c.size} ${c.blobId ?? '-'} ${c.path}`);
    if (c.fromPath !== undefined) lines.push(`Cns-From: ${c.id} ${c.fromPath}`);
  }
  return lines.join('\n') + '\n';
}

/** Reads a note written by formatNote; null when it is not one. */
export function parseNote(text: string): ParsedNote | null {
  const lines = text.replace(/\n+$/, '').split('\n');
  const actor = parseActor(lines[0] ?? '');
  const t = /^Cns-Time: (\S+)$/.exec(lines[1] ?? '');
  if (!actor || !t || Number.isNaN(Date.parse(t[1]))) return null;
  let push: PushRecord | null = null;
  const p = /^Cns-Push: ([0-9a-f]{40}|-) ([0-9a-f]{40}) (\d+)$/.exec(lines[2] ?? '');
  if (p) push = { before: p[1] === '-' ? null : p[1], after: p[2], commits: Number(p[3]) };
  const by = lines.slice(2, 4).map((l) => /^Cns-Authored-By: (.+)$/.exec(l)?.[1]).find(Boolean);
  if (by) actor.commitAuthor = by;
  return { actor, time: t[1], push, changes: parseNodeLines(lines.slice(2)) };
}

/** Commit messages keep newlines and tabs; other control characters would corrupt the object. */
export function cleanMessage(message: string): string {
  // eslint-disable-next-line no-control-regex
  return message.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').replace(/\s+$/, '') || 'update';
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}

function oneWord(s: string): string {
  return s.replace(/\s+/g, '_');
}

/**
 * formatMessage() for commits of many thousands of nodes, as UTF-8 bytes built in pieces (one
 * 15 MB string join held the event loop): yields to the event loop between slices.
 */
export async function formatMessageSliced(message: string, actor: Actor, changes: NodeChange[], tick: () => Promise<void>, extra: readonly string[] = []): Promise<Buffer> {
  const head = [`Cns-Actor: ${actor.type} ${oneWord(actor.id)} ${oneLine(actor.author)}`, ...extra].map((l) => `${l}\n`).join('');
  const parts: Buffer[] = [Buffer.from(`${cleanMessage(message)}\n\n${head}`, 'utf8')];
  let lines: string[] = [];
  const flush = () => {
    parts.push(Buffer.from(lines.join(''), 'utf8'));
    lines = [];
  };
  for (const c of changes) {
    await tick();
    lines.push(`Cns-Node: ${c.id} ${c.version ?? 0} ${c.type} ${c.op} ${c.parentId ?? '-'} ${c.size} ${c.blobId ?? '-'} ${c.path}\n`);
    if (c.fromPath !== undefined) lines.push(`Cns-From: ${c.id} ${c.fromPath}\n`);
    if (lines.length >= 500) flush();
  }
  flush();
  return Buffer.concat(parts);
}
