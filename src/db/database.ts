import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { runMigrations } from './migrate.ts';

export type Db = Database.Database;

/** The data folder is the owner's alone: it holds password hashes, emails, keys and the audit log. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export interface OpenOptions {
  fsync?: boolean;
  /** Create the database (and its folder) when missing; otherwise a missing file is an error. Default true. */
  create?: boolean;
}

/** Thrown when `create: false` and there is no database at the given place. */
export class DatabaseMissingError extends Error {
  constructor(readonly file: string) {
    super(`no cns database at ${file}`);
    this.name = 'DatabaseMissingError';
  }
}

/**
 * Opens the service database with the pragmas every component relies on and brings its
 * schema up to date. WAL lets readers proceed while a writer commits; synchronous is set
 * explicitly because this build's WAL mode silently lowers it (STACK.md). The folder is made
 * 0700 and the database files 0600, on creation and again on every open (installs made before).
 */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  if (file !== ':memory:') {
    if (!existsSync(file)) {
      if (options.create === false) throw new DatabaseMissingError(file);
      mkdirSync(dirname(file), { recursive: true, mode: DIR_MODE });
      // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's mode.
      closeSync(openSync(file, 'a', FILE_MODE));
    }
    chmodSync(dirname(file), DIR_MODE);
    restrictFiles(file);
  }
  const db = new Database(file, { fileMustExist: options.create === false });
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.fsync ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // After a big write the WAL file is cut back to this once checkpointed (see checkpointer.ts).
  db.pragma('journal_size_limit = 67108864');
  runMigrations(db);
  if (file !== ':memory:') restrictFiles(file);
  return db;
}

function restrictFiles(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      chmodSync(f, FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** Runs `fn` in a write transaction (BEGIN IMMEDIATE) and returns its result. */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
