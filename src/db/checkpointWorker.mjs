// The WAL checkpointer's thread (see checkpointer.ts): its own connection to the database runs
// PASSIVE checkpoints, which never block the service's readers or writer, off the event loop.
// Plain JavaScript: worker threads do not inherit the TypeScript loader of the main thread.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma(`synchronous = ${workerData.fsync ? 'FULL' : 'NORMAL'}`);

function checkpoint() {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, busy: row.busy, log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    parentPort.postMessage({ ok: false, error: String(err && err.message) });
  }
}

const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'now') checkpoint();
  if (m === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
