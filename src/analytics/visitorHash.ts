import { createHash, randomBytes } from 'node:crypto';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';

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
  /** The day's salt being read or made: the views of the first moments of a day wait for the one look-up. */
  private loading: { day: string; salt: Promise<string> } | null = null;

  constructor(private readonly metadata: MetadataStore) {}

  /** The visitor's hash for the day of `at` (22 URL-safe characters, 132 bits). */
  async hash(address: string, userAgent: string, at: number): Promise<string> {
    const day = utcDay(at);
    const salt = this.current?.day === day ? this.current.salt : await this.saltOf(day);
    return createHash('sha256').update(salt).update('\0').update(address).update('\0').update(userAgent).digest('base64url').slice(0, 22);
  }

  private saltOf(day: string): Promise<string> {
    if (this.loading?.day !== day) {
      const salt = this.load(day);
      this.loading = { day, salt };
      salt.catch(() => (this.loading = null)); // the next view tries again
    }
    return this.loading.salt;
  }

  /** Once a day: the stored salt of today (another process may have made it), or a new one; other days' are deleted. */
  private async load(day: string): Promise<string> {
    const db = this.metadata.db;
    await db.insertInto('analytics_salts').values({ day, salt: randomBytes(32).toString('base64url') }).onConflict((oc) => oc.doNothing()).execute();
    const { salt } = await db.selectFrom('analytics_salts').select('salt').where('day', '=', day).executeTakeFirstOrThrow();
    await db.deleteFrom('analytics_salts').where('day', '<>', day).execute();
    if (!this.current || this.current.day < day) this.current = { day, salt };
    return salt;
  }
}
