import test from 'ava';
import type { ApiResponse } from '../helpers/server.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

// Each rule of the id surface is checked inside the project's serialized write section: two
// requests that both pass every check made before their commits are queued must still end
// with exactly one success and one 409 (never two successes).

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * Holds the project's writer, sends `first` and waits until its commit is queued, then sends
 * `second` and waits likewise, then lets both commits run in that order: both requests did
 * their reads before either commit was built.
 */
async function race(projectId: string, first: () => Promise<ApiResponse>, second: () => Promise<ApiResponse>): Promise<[ApiResponse, ApiResponse]> {
  const content = f.server.services.content;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let holding = false;
  const held = content.commitPlanned(projectId, { type: 'user', id: 'test', author: 'test@example.com' }, async () => {
    holding = true;
    await gate;
    return null;
  });
  await until('the writer to be held', () => holding);
  let queued = 0;
  const commit = content.commit.bind(content);
  content.commit = (...args) => {
    queued++;
    return commit(...args);
  };
  try {
    const a = first();
    await until('the first commit to be queued', () => queued === 1);
    const b = second();
    await until('the second commit to be queued', () => queued === 2);
    release();
    await held;
    return [await a, await b];
  } finally {
    release();
    delete (content as { commit?: unknown }).commit;
  }
}

test.serial('PUT /nodes/{id} after a concurrent delete: 409, never a new node at the old path', async (t) => {
  const doc = await f.make('markdown', 'put-race.md', null, 'v1');
  const [del, put] = await race(f.pid, () => f.call('DELETE', `/nodes/${doc.id}`), () => f.call('PUT', `/nodes/${doc.id}`, { content: 'v2' }));
  t.is(del.status, 200);
  t.is(put.status, 409, JSON.stringify(put.body));
  t.is((await f.call('GET', `/nodes/by-path?project_id=${f.pid}&path=put-race.md`)).status, 404, 'nothing was written at the old path');
  t.is((await f.call('GET', `/nodes/${doc.id}`)).body.data.state, 'trashed');
});

test.serial('POST /nodes/folder twice: one 201, one 409', async (t) => {
  const body = { project_id: f.pid, parent_id: null, name: 'folder-race' };
  const [a, b] = await race(f.pid, () => f.call('POST', '/nodes/folder', body), () => f.call('POST', '/nodes/folder', body));
  t.is(a.status, 201);
  t.is(b.status, 409, JSON.stringify(b.body));
});

test.serial('bulk-create of the same folder twice: one 201, one 409, nothing of the loser written', async (t) => {
  const body = (file: string) => ({ project_id: f.pid, nodes: [{ name: 'bulk-race', type: 'folder', temp_id: 'd' }, { name: file, type: 'markdown', content: file, parent_temp_id: 'd' }] });
  const [a, b] = await race(f.pid, () => f.call('POST', '/nodes/bulk-create', body('a.md')), () => f.call('POST', '/nodes/bulk-create', body('b.md')));
  t.is(a.status, 201);
  t.is(b.status, 409, JSON.stringify(b.body));
  t.is((await f.call('GET', `/nodes/by-path?project_id=${f.pid}&path=bulk-race/b.md`)).status, 404);
});

test.serial('moving two folders into each other at once: one 200, one 409, no folder inside itself', async (t) => {
  const a = await f.make('folder', 'race-a');
  const b = await f.make('folder', 'race-b');
  const [first, second] = await race(
    f.pid,
    () => f.call('POST', `/nodes/${a.id}/move`, { new_parent_id: b.id }),
    () => f.call('POST', `/nodes/${b.id}/move`, { new_parent_id: a.id }),
  );
  t.is(first.status, 200);
  t.is(second.status, 409, JSON.stringify(second.body));
  t.is((await f.call('GET', `/nodes/${a.id}`)).body.data.path, 'race-b/race-a');
  t.is((await f.call('GET', `/nodes/${b.id}`)).body.data.path, 'race-b');
  t.is((await f.call('GET', `/nodes/by-path?project_id=${f.pid}&path=race-a`)).status, 404, 'no folder was recreated at the old path');
});

test.serial('seed twice at once: one creates the samples, the other 409 (never overwrites)', async (t) => {
  const [a, b] = await race(f.pid, () => f.call('POST', `/projects/${f.pid}/seed`), () => f.call('POST', `/projects/${f.pid}/seed`));
  t.is(a.status, 200, JSON.stringify(a.body));
  t.true(a.body.data.created.length > 0);
  t.is(b.status, 409, JSON.stringify(b.body));
  const again = await f.call('POST', `/projects/${f.pid}/seed`);
  t.is(again.status, 200);
  t.false(again.body.data.changed);
});
