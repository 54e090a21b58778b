import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { runMigrations } from './migrate.ts';

export type Db = Database.Database;

/**
 * Opens the service database with the pragmas every component relies on and brings its
 * schema up to date. WAL lets readers proceed while a writer commits; synchronous is set
 * explicitly because this build's WAL mode silently lowers it (STACK.md).
 */
export function openDatabase(file: string, options: { fsync?: boolean } = {}): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.fsync ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  runMigrations(db);
  return db;
}

/** Runs `fn` in a write transaction (BEGIN IMMEDIATE) and returns its result. */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
