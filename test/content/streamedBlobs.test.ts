import test from 'ava';
import { Readable } from 'node:stream';
import { newNodeId } from '../../src/content/contentStore.ts';
import { alice, errorCode, fixture } from './helpers.ts';

const streamOf = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

test('a streamed blob becomes a file node under the id chosen in advance; the id cannot be used twice', async (t) => {
  const f = fixture();
  t.teardown(() => f.cleanup());
  const blobId = await f.store.writeBlobStream('p', streamOf('hello ', 'world'), 11);
  const id = newNodeId();
  const r = await f.store.commit('p', alice, [{ op: 'writeBlob', id, path: 'up/hello.txt', blobId, size: 11 }]);
  const node = r.nodes.find((n) => n.path === 'up/hello.txt')!;
  t.is(node.id, id);
  t.is(node.type, 'file');
  t.is(node.contentHash, blobId);
  t.is((await f.store.readContent('p', { id })).bytes.toString(), 'hello world');
  t.is(f.store.findById(id)?.projectId, 'p');
  t.deepEqual(f.store.listChildrenOf('p', node.parentId).map((n) => n.id), [id]);

  const blob = await f.store.openBlob('p', blobId);
  t.is(blob.size, 11);
  const chunks: Buffer[] = [];
  for await (const c of blob.stream(6, 9)) chunks.push(c as Buffer);
  t.is(Buffer.concat(chunks).toString(), 'worl');

  t.is(await errorCode(f.store.commit('p', alice, [{ op: 'writeBlob', id, path: 'up/again.txt', blobId, size: 11 }])), 'CONFLICT');
  t.is(await errorCode(f.store.commit('p', alice, [{ op: 'writeBlob', path: 'up/x.txt', blobId: 'f'.repeat(40), size: 1 }])), 'VALIDATION_ERROR');
});

test('a stream longer or shorter than its declared size stores nothing', async (t) => {
  const f = fixture();
  t.teardown(() => f.cleanup());
  t.is(await errorCode(f.store.writeBlobStream('p', streamOf('too long'), 3)), 'PAYLOAD_TOO_LARGE');
  t.is(await errorCode(f.store.writeBlobStream('p', streamOf('short'), 30)), 'VALIDATION_ERROR');
});
