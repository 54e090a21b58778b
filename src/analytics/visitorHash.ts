import { createHash, randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.ts';

/** The UTC day of a time, `YYYY-MM-DD`: the life of one salt. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Counts visitors without storing who they are: a visitor is the hash of its address and user
 * agent salted with a random salt of the day. The salt is kept in memory and in SQLite (a restart
 * the same day keeps counting the same visitors once); the salts of other days are deleted as soon
 * as a new day starts, after which nobody (not us either) can link old hashes to an address.
 */
export class VisitorHasher {
  private current: { day: string; salt: string } | null = null;
  private readonly s: Record<'find' | 'insert' | 'dropOthers', Statement>;

  constructor(db: Db) {
    this.s = {
      find: db.prepare('SELECT salt FROM analytics_salts WHERE day = ?'),
      insert: db.prepare('INSERT OR IGNORE INTO analytics_salts (day, salt) VALUES (?, ?)'),
      dropOthers: db.prepare('DELETE FROM analytics_salts WHERE day <> ?'),
    };
  }

  /** The visitor's hash for the day of `at` (22 URL-safe characters, 132 bits). */
  hash(address: string, userAgent: string, at: number): string {
    const salt = this.saltOf(utcDay(at));
    return createHash('sha256').update(salt).update('\0').update(address).update('\0').update(userAgent).digest('base64url').slice(0, 22);
  }

  private saltOf(day: string): string {
    if (this.current?.day === day) return this.current.salt;
    // Once a day: the stored salt of today (another run may have made it), or a new one.
    this.s.insert.run(day, randomBytes(32).toString('base64url'));
    const salt = (this.s.find.get(day) as { salt: string }).salt;
    this.s.dropOthers.run(day);
    this.current = { day, salt };
    return salt;
  }
}
