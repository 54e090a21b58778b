import test from 'ava';
import { planPush, type PushPlan, type TrackedFile } from '../../src/cli/sync/pushPlan.ts';

// The push planner of `cns sync`, table-driven: the folder's state of the last sync and what the
// folder holds now → the operations pushed. Hashes are short labels; versions tell files apart.

interface Row {
  title: string;
  scope?: string;
  /** Tracked path → [hash, version] as last synced. */
  tracked?: Record<string, [string, number]>;
  /** Path → hash now in the folder (undefined: a new file not hashed). */
  present?: Record<string, string | undefined>;
  stillOnDisk?: string[];
  expect: PushPlan;
}

const rows: Row[] = [
  { title: 'nothing changed: nothing to push', tracked: { 'a.md': ['h1', 3] }, present: { 'a.md': 'h1' }, expect: { untrack: [], ops: [] } },
  { title: 'an empty folder with no state: nothing to push', expect: { untrack: [], ops: [] } },
  {
    title: 'an edited file is written on top of the version it was based on',
    tracked: { 'a.md': ['h1', 3] },
    present: { 'a.md': 'h2' },
    expect: { untrack: [], ops: [{ op: { action: 'write', path: 'a.md', content: '', base_version: 3 }, rel: 'a.md' }] },
  },
  {
    title: 'a new file is created (base version 0)',
    present: { 'n/new.md': 'h9' },
    expect: { untrack: [], ops: [{ op: { action: 'write', path: 'n/new.md', content: '', base_version: 0 }, rel: 'n/new.md' }] },
  },
  {
    title: 'a removed file is deleted at the version it was based on',
    tracked: { 'a.md': ['h1', 3], 'b.md': ['h2', 5] },
    present: { 'b.md': 'h2' },
    expect: { untrack: [], ops: [{ op: { action: 'delete', path: 'a.md', base_version: 3 }, rel: 'a.md' }] },
  },
  {
    title: 'a file ignored since but still on disk is untracked, never deleted from the project',
    tracked: { 'build/out.log': ['h1', 2] },
    stillOnDisk: ['build/out.log'],
    expect: { untrack: ['build/out.log'], ops: [] },
  },
  {
    title: 'a file gone and a new one with the same bytes is a move (the node keeps its id)',
    tracked: { 'old.md': ['h1', 4] },
    present: { 'dir/new.md': 'h1' },
    expect: { untrack: [], ops: [{ op: { action: 'move', from: 'old.md', path: 'dir/new.md', base_version: 4 }, rel: 'dir/new.md', from: 'old.md' }] },
  },
  {
    title: 'renamed and edited: a delete and a creation',
    tracked: { 'old.md': ['h1', 4] },
    present: { 'new.md': 'h2' },
    expect: {
      untrack: [],
      ops: [
        { op: { action: 'delete', path: 'old.md', base_version: 4 }, rel: 'old.md' },
        { op: { action: 'write', path: 'new.md', content: '', base_version: 0 }, rel: 'new.md' },
      ],
    },
  },
  {
    title: 'a new file whose hash was not computed is never taken for a move',
    tracked: { 'old.md': ['h1', 4] },
    present: { 'new.md': undefined },
    expect: {
      untrack: [],
      ops: [
        { op: { action: 'delete', path: 'old.md', base_version: 4 }, rel: 'old.md' },
        { op: { action: 'write', path: 'new.md', content: '', base_version: 0 }, rel: 'new.md' },
      ],
    },
  },
  {
    title: 'one file gone, two copies of its bytes: one move, one creation',
    tracked: { 'a.md': ['h1', 2] },
    present: { 'b.md': 'h1', 'c.md': 'h1' },
    expect: {
      untrack: [],
      ops: [
        { op: { action: 'move', from: 'a.md', path: 'b.md', base_version: 2 }, rel: 'b.md', from: 'a.md' },
        { op: { action: 'write', path: 'c.md', content: '', base_version: 0 }, rel: 'c.md' },
      ],
    },
  },
  {
    title: 'two files with the same bytes both moved: each new path is used once',
    tracked: { 'a.md': ['h1', 2], 'b.md': ['h1', 7] },
    present: { 'x/a.md': 'h1', 'x/b.md': 'h1' },
    expect: {
      untrack: [],
      ops: [
        { op: { action: 'move', from: 'b.md', path: 'x/a.md', base_version: 7 }, rel: 'x/a.md', from: 'b.md' },
        { op: { action: 'move', from: 'a.md', path: 'x/b.md', base_version: 2 }, rel: 'x/b.md', from: 'a.md' },
      ],
    },
  },
  {
    title: 'deletes first, then moves, then writes (edits before creations)',
    tracked: { 'keep.md': ['k1', 1], 'gone.md': ['g1', 2], 'moved.md': ['m1', 3], 'ignored.log': ['i1', 4] },
    present: { 'new.md': 'n1', 'keep.md': 'k2', 'moved-to.md': 'm1' },
    stillOnDisk: ['ignored.log'],
    expect: {
      untrack: ['ignored.log'],
      ops: [
        { op: { action: 'delete', path: 'gone.md', base_version: 2 }, rel: 'gone.md' },
        { op: { action: 'move', from: 'moved.md', path: 'moved-to.md', base_version: 3 }, rel: 'moved-to.md', from: 'moved.md' },
        { op: { action: 'write', path: 'keep.md', content: '', base_version: 1 }, rel: 'keep.md' },
        { op: { action: 'write', path: 'new.md', content: '', base_version: 0 }, rel: 'new.md' },
      ],
    },
  },
  {
    title: 'a folder bound to a subtree pushes project paths under its scope',
    scope: 'docs/team',
    tracked: { 'a.md': ['h1', 3], 'b.md': ['h2', 1] },
    present: { 'a.md': 'h9', 'c.md': 'h2' },
    expect: {
      untrack: [],
      ops: [
        { op: { action: 'move', from: 'docs/team/b.md', path: 'docs/team/c.md', base_version: 1 }, rel: 'c.md', from: 'b.md' },
        { op: { action: 'write', path: 'docs/team/a.md', content: '', base_version: 3 }, rel: 'a.md' },
      ],
    },
  },
  {
    title: 'a new file named like an Object property is still a creation',
    tracked: {},
    present: { constructor: 'h1', ['__proto__']: 'h2', toString: 'h3' },
    expect: {
      untrack: [],
      ops: [
        { op: { action: 'write', path: 'constructor', content: '', base_version: 0 }, rel: 'constructor' },
        { op: { action: 'write', path: '__proto__', content: '', base_version: 0 }, rel: '__proto__' },
        { op: { action: 'write', path: 'toString', content: '', base_version: 0 }, rel: 'toString' },
      ],
    },
  },
];

for (const row of rows) {
  test(`push plan: ${row.title}`, (t) => {
    const tracked: Record<string, TrackedFile> = {};
    for (const [rel, [localHash, version]] of Object.entries(row.tracked ?? {})) tracked[rel] = { localHash, version };
    const plan = planPush({
      scope: row.scope ?? '',
      tracked,
      present: new Map(Object.entries(row.present ?? {})),
      stillOnDisk: new Set(row.stillOnDisk ?? []),
    });
    t.deepEqual(plan, row.expect);
  });
}
