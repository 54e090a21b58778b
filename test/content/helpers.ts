import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { ContentStore, type Actor, type ContentStoreOptions } from '../../src/content/contentStore.ts';

export const alice: Actor = { type: 'user', id: 'u_alice', author: 'alice@example.com' };
export const bot: Actor = { type: 'agent', id: 'c_bot', author: 'agent:bot' };

export interface Fixture {
  dir: string;
  db: Db;
  store: ContentStore;
  reopen(options?: Partial<ContentStoreOptions>): Promise<ContentStore>;
  cleanup(): Promise<void>;
}

/** A store over a fresh temp data folder (repos + cns.db), closed and removed by cleanup(). */
export function fixture(options: Partial<ContentStoreOptions> = {}): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'cns-content-'));
  const db = openDatabase(join(dir, 'cns.db'));
  const f: Fixture = {
    dir,
    db,
    store: new ContentStore({ dataDir: dir, db, ...options }),
    async reopen(more = {}) {
      await f.store.close();
      f.store = new ContentStore({ dataDir: dir, db, ...options, ...more });
      return f.store;
    },
    async cleanup() {
      await f.store.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return f;
}

/** Polls `check` until it returns a value or the deadline passes. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The `code` of the error a call rejects with (undefined when it succeeds). */
export async function errorCode(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return (e as { code?: string }).code ?? 'NO_CODE';
  }
  return undefined;
}
