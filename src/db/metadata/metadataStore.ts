import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { beginImmediate, endTransaction } from '../writeTurn.ts';
import { sqliteChanges, type MetadataChanges } from './metadataChanges.ts';
import type { MetadataSchema } from './schema.ts';
import { cachingStatements } from './statementCache.ts';

export type MetadataDb = Kysely<MetadataSchema>;

/**
 * The metadata store (docs/design/postgres.md): every record git cannot rebuild, reached through
 * one async data-access layer so the same stores run on SQLite or PostgreSQL. `db` runs single
 * statements; several statements that must commit together go through `transaction`.
 */
export interface MetadataStore {
  readonly db: MetadataDb;
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one write transaction on one connection and commits what it did, or rolls it all
   * back when it throws. `fn` must await only its own queries: the lock is held meanwhile. On
   * PostgreSQL `fn` runs again when the server rolled it back for a serialization failure or a
   * deadlock, so it keeps no effect outside its queries that a second run would repeat.
   */
  transaction<T>(fn: (trx: MetadataDb) => Promise<T>): Promise<T>;
  /** When cached rows may have changed (metadataCache.ts). */
  readonly changes: MetadataChanges;
  close(): Promise<void>;
}

export interface SqliteMetadataOptions {
  fsync?: boolean;
}

/**
 * The metadata store on SQLite: the service's database file (already migrated by openDatabase),
 * through a connection of its own. Its own, because an open metadata transaction spans awaits:
 * on the content core's connection, a content commit made meanwhile would become part of it.
 * Waiting for the write lock never holds the event loop (beginImmediate).
 */
export function openSqliteMetadata(file: string, options: SqliteMetadataOptions = {}): MetadataStore {
  const raw = new Database(file, { fileMustExist: true });
  raw.pragma(`synchronous = ${options.fsync ? 'FULL' : 'NORMAL'}`);
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const db = new Kysely<MetadataSchema>({ dialect: new SqliteDialect({ database: cachingStatements(raw) }) });
  return {
    db,
    engine: 'sqlite',
    transaction: (fn) =>
      // One reserved connection (Kysely's mutex): no other query of this store runs in between.
      db.connection().execute(async (conn) => {
        await beginImmediate(raw);
        let result;
        try {
          result = await fn(conn);
        } catch (e) {
          endTransaction(raw, true);
          throw e;
        }
        endTransaction(raw, false);
        return result;
      }),
    changes: sqliteChanges(raw),
    close: () => db.destroy(),
  };
}
