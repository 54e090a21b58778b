// One SQLite session in its own process (see sqlite.ts for why): opens one file read-only and
// answers the parent's requests over the IPC channel. Plain JavaScript so that it starts without
// the TypeScript loader. Messages in: {op: 'open', file} | {op: 'catalog', only, cap} |
// {op: 'stream', sql, limit}. Messages out: ready | catalog | columns | rows | done | error.
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';

/** Counting the rows of a table is cheap when the whole file is at most this large: COUNT(*) reads no more than the file. */
const CHEAP_COUNT_BYTES = 16 * 1024 * 1024;
const BATCH = 500;

let db = null;
let file = null;

const send = (message) => new Promise((resolve) => process.send(message, () => resolve()));

function open(path) {
  file = path;
  db = new Database(path, { readonly: true, fileMustExist: true });
  // Reading the schema makes a file that is not a database fail here, not at the first query.
  db.prepare('SELECT count(*) FROM sqlite_schema').get();
}

/** Rows from sqlite_stat1 (written by ANALYZE) when present: the first number of a table's stat is its row count. */
function statEstimates() {
  const out = new Map();
  if (!db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'").get()) return out;
  for (const { tbl, stat } of db.prepare('SELECT tbl, stat FROM sqlite_stat1 ORDER BY idx IS NOT NULL').all()) {
    const n = Number.parseInt(String(stat), 10);
    if (!out.has(tbl) && Number.isFinite(n)) out.set(tbl, n);
  }
  return out;
}

function catalog(only, cap) {
  const names = only ? only.filter((o) => o.schema === null || o.schema === 'main').map((o) => o.name) : null;
  const filter = names ? 'AND name IN (SELECT value FROM json_each(?))' : '';
  const params = names ? [JSON.stringify(names), cap + 1] : [cap + 1];
  const rows = db
    .prepare(`SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ${filter} ORDER BY name LIMIT ?`)
    .all(...params);
  const truncated = rows.length > cap;
  const estimates = statEstimates();
  const small = statSync(file).size <= CHEAP_COUNT_BYTES;
  const columnsOf = db.prepare('SELECT name, type, "notnull" AS not_null FROM pragma_table_info(?)');
  const tables = rows.slice(0, cap).map(({ name, type }) => {
    let rowEstimate = null;
    let rowCountExact = false;
    if (type === 'table' && estimates.has(name)) rowEstimate = estimates.get(name);
    else if (type === 'table' && small) {
      rowEstimate = db.prepare(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`).get().n;
      rowCountExact = true;
    }
    const columns = columnsOf.all(name).map((c) => ({ name: c.name, type: c.type || null, nullable: c.not_null === 0 }));
    return { schema: 'main', name, qualifiedName: name, kind: type, rowEstimate, rowCountExact, columns };
  });
  return { tables, truncated };
}

async function stream(sql, limit) {
  const stmt = db.prepare(sql);
  if (!stmt.reader) {
    // Not a query: running it shows what SQLite says (a read-only file refuses writes).
    stmt.run();
    await send({ type: 'columns', columns: [] });
    return send({ type: 'done', rows: 0, truncated: false });
  }
  stmt.raw(true).safeIntegers(true);
  await send({ type: 'columns', columns: stmt.columns().map((c) => ({ name: c.name, type: c.type, nullable: null })) });
  let rows = 0;
  let batch = [];
  for (const row of stmt.iterate()) {
    if (rows === limit) {
      if (batch.length) await send({ type: 'rows', rows: batch });
      return send({ type: 'done', rows, truncated: true });
    }
    batch.push(row);
    rows++;
    if (batch.length === BATCH) {
      await send({ type: 'rows', rows: batch });
      batch = [];
    }
  }
  if (batch.length) await send({ type: 'rows', rows: batch });
  return send({ type: 'done', rows, truncated: false });
}

process.on('message', async (m) => {
  try {
    if (m.op === 'open') {
      open(m.file);
      await send({ type: 'ready' });
    } else if (m.op === 'catalog') await send({ type: 'catalog', ...catalog(m.only, m.cap) });
    else if (m.op === 'stream') await stream(m.sql, m.limit);
  } catch (e) {
    await send({ type: 'error', code: e?.code ?? e?.name ?? null, message: String(e?.message ?? e) });
  }
});
process.on('disconnect', () => process.exit(0));
