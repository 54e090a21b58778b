import test from 'ava';
import { UploadGrants } from '../../src/domain/uploads/uploadGrants.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

/**
 * An upload PUT crosses from the metadata store to the content core (issue 30): it claims its
 * grant row, commits (the commit names the grant), then deletes the row. A crash between the
 * commit and the delete leaves a claimed row: the next PUT of the address finds the commit and
 * finishes it (403, nothing written twice); a stale claim without a commit is released.
 */
let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

async function announce(name: string) {
  const res = await f.call('POST', '/nodes/upload', { project_id: f.pid, name, size: 3 });
  if (res.status !== 201) throw new Error(`upload request: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { upload_url: string; node_id: string };
}

async function put(url: string, body: string) {
  const res = await fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } });
  return { status: res.status, body: (await res.json()) as any };
}

const versionsOf = async (id: string) => (await f.call('GET', `/nodes/${id}/versions`)).body.data.total as number;
const rows = () => f.server.services.metadata.db.selectFrom('node_uploads').select(['id', 'node_id', 'claimed_at']);
const rowOf = async (nodeId: string) => (await rows().where('node_id', '=', nodeId).executeTakeFirst()) ?? null;

test.serial('the grant is not used up after the commit (it fails once): the next PUT finds the commit, uses the address up and writes nothing', async (t) => {
  const up = await announce('crash.bin');
  const finish = UploadGrants.prototype.finish;
  let failures = 1;
  UploadGrants.prototype.finish = async function (id: string) {
    if (failures-- > 0) throw new Error('the metadata store went away');
    return finish.call(this, id);
  };
  t.teardown(() => {
    UploadGrants.prototype.finish = finish;
  });
  const first = await put(up.upload_url, 'one');
  t.is(first.status, 201, 'the content is written: the PUT succeeded');
  t.truthy((await rowOf(up.node_id))?.claimed_at, 'its claim is left behind');

  const replay = await put(up.upload_url, 'two');
  t.is(replay.status, 403);
  t.regex(replay.body.message, /already been used/);
  t.is(await rowOf(up.node_id), null, 'the claim is finished: the row is gone');
  t.is(await versionsOf(up.node_id), 1, 'written once');
  const cat = await f.call('GET', `/content/${f.pid}/cat?path=crash.bin`);
  t.is(cat.status, 200);
});

test.serial('a claim held by a PUT under way answers 409; one left stale without a commit is released and the address writes once', async (t) => {
  const up = await announce('stale.bin');
  const grant = (await rowOf(up.node_id))!;
  const claim = (at: string) => f.server.services.metadata.db.updateTable('node_uploads').set({ claimed_at: at }).where('id', '=', grant.id).execute();

  await claim(new Date().toISOString());
  const busy = await put(up.upload_url, 'one');
  t.is(busy.status, 409);
  t.is(busy.body.code, 'CONFLICT');
  t.is((await f.call('GET', `/nodes/${up.node_id}`)).status, 404, 'nothing written');

  await claim(new Date(Date.now() - 10 * 60_000).toISOString());
  const released = await put(up.upload_url, 'one');
  t.is(released.status, 201, JSON.stringify(released.body));
  t.is(await rowOf(up.node_id), null);
  t.is((await put(up.upload_url, 'two')).status, 403, 'used up');
  t.is(await versionsOf(up.node_id), 1);
});

test.serial('a PUT that fails after its claim (a body longer than declared) releases it: the address can be used again', async (t) => {
  const up = await announce('retry.bin');
  // Chunked: no Content-Length to refuse up front, so the claim is taken and the body read.
  const body = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode('abcdef'));
      c.close();
    },
  });
  const res = await fetch(up.upload_url, { method: 'PUT', body, duplex: 'half', headers: { 'content-type': 'application/octet-stream' } } as RequestInit);
  t.true(res.status >= 400 && res.status < 500, `refused: ${res.status}`);
  t.is((await rowOf(up.node_id))!.claimed_at, null, 'the claim is released');
  t.is((await f.call('GET', `/nodes/${up.node_id}`)).status, 404, 'nothing written');
  t.is((await put(up.upload_url, 'abc')).status, 201);
  t.is(await versionsOf(up.node_id), 1);
});
