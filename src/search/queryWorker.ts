import { parentPort } from 'node:worker_threads';
import { ReaderCache, answerQuery, type QueryReply, type QueryRequest } from './queryOps.ts';

// A search query thread of the QueryPool: answers each request from its own read-only connections.
const cache = new ReaderCache();
parentPort!.on('message', (m: QueryRequest) => {
  let reply: QueryReply;
  try {
    reply = { id: m.id, ok: true, result: answerQuery(cache, m) };
  } catch (err) {
    reply = { id: m.id, ok: false, error: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage({ ready: true });
