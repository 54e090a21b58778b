import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { engineOver, type DbEngine, type DbSession } from './engine.ts';
import { SessionFailure } from './errors.ts';
import { TABLE_LIST_CAP, type ColumnInfo, type RowSink, type SessionLimits, type StreamOutcome, type TableList } from './types.ts';

/*
 * SQLite sessions. better-sqlite3 is synchronous and cannot interrupt a statement, so a
 * statement run in the server's process would stop every other request for as long as it runs
 * (a recursive CTE can run forever). Each session is therefore a small child process
 * (sqliteWorker.mjs) that opens the file with {readonly: true, fileMustExist: true} and streams
 * rows back in batches; the statement timeout kills it. The file was resolved inside
 * CNS_DB_SQLITE_DIR by the caller (sqliteFiles.ts).
 */

const WORKER = fileURLToPath(new URL('./sqliteWorker.mjs', import.meta.url));

type WorkerMessage =
  | { type: 'ready' }
  | ({ type: 'catalog' } & TableList)
  | { type: 'columns'; columns: ColumnInfo[] }
  | { type: 'rows'; rows: unknown[][] }
  | { type: 'done'; rows: number; truncated: boolean }
  | { type: 'error'; code: string | null; message: string };

const timeoutMessage = (limits: SessionLimits) => `The statement ran longer than the statement timeout (${limits.statementTimeoutMs} ms, CNS_DB_STATEMENT_TIMEOUT_MS) and was stopped.`;

function failure(m: { code: string | null; message: string }, opening: boolean): SessionFailure {
  const code = m.code ?? '';
  if (code.startsWith('SQLITE_READONLY')) return new SessionFailure('read_only', `SQLite refused a write: the file is opened read-only (${m.message}).`);
  if (opening) return new SessionFailure('auth', `SQLite could not open the file: ${m.message}.`, 'file');
  return new SessionFailure('statement', `SQLite refused the statement: ${m.message}.`);
}

class SqliteSession implements DbSession {
  private handler: ((m: WorkerMessage) => void) | null = null;
  private onExit: (() => void) | null = null;
  private exited = false;

  constructor(
    private readonly child: ChildProcess,
    private readonly limits: SessionLimits,
  ) {
    child.on('message', (m) => this.handler?.(m as WorkerMessage));
    child.once('exit', () => {
      this.exited = true;
      this.onExit?.();
    });
  }

  /**
   * Sends one request and feeds the answers to `onMessage` until it settles; the statement
   * timeout kills the process, as does an error thrown by the sink.
   */
  request<T>(message: object, onMessage: (m: WorkerMessage, done: (v: T) => void) => void, opening = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (v: T | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.handler = null;
        this.onExit = null;
        if (v instanceof Error) {
          this.kill();
          reject(v);
        } else resolve(v);
      };
      // Opening (starting the process, opening the file) is SQLite's "connect": the connect timeout bounds it, not the statement timeout.
      const timer = opening
        ? setTimeout(() => finish(new SessionFailure('network', `SQLite could not open the file: no answer within ${this.limits.connectTimeoutMs / 1000} s.`)), this.limits.connectTimeoutMs)
        : setTimeout(() => finish(new SessionFailure('timeout', timeoutMessage(this.limits))), this.limits.statementTimeoutMs);
      this.handler = (m) => {
        if (m.type === 'error') return finish(failure(m, opening));
        try {
          onMessage(m, (v) => finish(v));
        } catch (e) {
          finish(e as Error);
        }
      };
      this.onExit = () => finish(new SessionFailure('network', 'The SQLite session ended unexpectedly.'));
      if (this.exited) return this.onExit();
      this.child.send(message);
    });
  }

  catalog(only?: { schema: string | null; name: string }[]): Promise<TableList> {
    return this.request<TableList>({ op: 'catalog', only: only ?? null, cap: TABLE_LIST_CAP }, (m, done) => {
      if (m.type === 'catalog') done({ tables: m.tables, truncated: m.truncated });
    });
  }

  stream(sql: string, limit: number, sink: RowSink): Promise<StreamOutcome> {
    return this.request<StreamOutcome>({ op: 'stream', sql, limit }, (m, done) => {
      if (m.type === 'columns') sink.columns(m.columns);
      else if (m.type === 'rows') for (const row of m.rows) sink.row(row);
      else if (m.type === 'done') done({ rows: m.rows, truncated: m.truncated });
    });
  }

  private kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    if (this.exited) return;
    await new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }
}

/** An SQLite file (already resolved inside CNS_DB_SQLITE_DIR) as a DbEngine: one child process per call. */
export function sqliteEngine(file: string, limits: SessionLimits): DbEngine {
  return engineOver({
    engine: 'sqlite',
    async open() {
      // No TypeScript loader and no inherited inspector flags: a plain, fast-starting Node process.
      const child = fork(WORKER, [], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
      const session = new SqliteSession(child, limits);
      await session.request<void>({ op: 'open', file }, (m, done) => m.type === 'ready' && done(undefined), true);
      return session;
    },
  });
}
