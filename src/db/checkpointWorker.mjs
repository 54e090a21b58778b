// The WAL checkpointer's thread (see checkpointer.ts): its own connection to the database runs
// PASSIVE checkpoints, which never block the service's readers or writer, off the event loop.
// While commits keep coming, a checkpoint runs every `busyEveryMs`: the WAL stays small (many
// short transactions rewrite the same pages, so an unchecked WAL grows by gigabytes during a
// 100,000-file write, and copying that much at once throttles every writer of the machine).
// Plain JavaScript: worker threads do not inherit the TypeScript loader of the main thread.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, fsync, pollMs, idleMs, busyEveryMs } = workerData;
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma(`synchronous = ${fsync ? 'FULL' : 'NORMAL'}`);

let lastVersion = db.pragma('data_version', { simple: true });
let lastActivity = Date.now();
let dirty = true;
let lastBusyCheckpoint = 0;

function checkpoint(reason) {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    if (row.busy === 0 && row.log === row.checkpointed) dirty = false;
    parentPort.postMessage({ ok: true, reason, busy: row.busy, log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    parentPort.postMessage({ ok: false, reason, error: String(err && err.message) });
  }
}

const timer = setInterval(() => {
  const version = db.pragma('data_version', { simple: true });
  const now = Date.now();
  if (version !== lastVersion) {
    lastVersion = version;
    lastActivity = now;
    dirty = true;
  }
  if (!dirty) return;
  if (now - lastActivity >= idleMs) checkpoint('idle');
  else if (now - lastBusyCheckpoint >= busyEveryMs) {
    lastBusyCheckpoint = now;
    checkpoint('busy');
  }
}, pollMs);

parentPort.on('message', (m) => {
  if (m === 'now') checkpoint('asked');
  if (m === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
