import type { Db } from '../../db/database.ts';
import { newId, nowIso } from '../../util/ids.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { statementCache } from '../../db/statements.ts';
import { FreshCache } from '../../db/freshCache.ts';

export interface UserRecord {
  id: string;
  email: string;
  password_hash: string;
  display_name: string;
  is_admin: number;
  initialized_at: string | null;
  onboarding_completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export class EmailTakenError extends Error {
  readonly code = 'CONFLICT';
  constructor(email: string) {
    super(`A user with the email ${email} already exists.`);
  }
}

/** Users: creation with a hashed password, and the look-ups authentication needs. */
export class UserStore {
  private readonly sql: ReturnType<typeof statementCache>;
  /** findById runs on every request of a signed-in user. */
  private readonly byId: FreshCache<string, UserRecord>;

  constructor(db: Db) {
    this.sql = statementCache(db);
    this.byId = new FreshCache(db, 10_000);
  }

  async create(input: { email: string; password: string; displayName?: string; isAdmin?: boolean }): Promise<UserRecord> {
    if (this.findByEmail(input.email)) throw new EmailTakenError(input.email);
    const now = nowIso();
    const user: UserRecord = {
      id: newId('usr'),
      email: input.email.trim(),
      password_hash: await hashPassword(input.password),
      display_name: input.displayName ?? input.email.split('@')[0] ?? '',
      is_admin: input.isAdmin ? 1 : 0,
      initialized_at: null,
      onboarding_completed_at: null,
      created_at: now,
      updated_at: now,
    };
    try {
      this.sql(
          `INSERT INTO users (id, email, password_hash, display_name, is_admin, created_at, updated_at)
           VALUES (@id, @email, @password_hash, @display_name, @is_admin, @created_at, @updated_at)`,
        )
        .run(user);
    } catch (err) {
      if (String(err).includes('UNIQUE')) throw new EmailTakenError(input.email);
      throw err;
    }
    return user;
  }

  findById(id: string): UserRecord | undefined {
    return this.byId.get(id, () => this.sql('SELECT * FROM users WHERE id = ?').get(id) as UserRecord | undefined);
  }

  findByEmail(email: string): UserRecord | undefined {
    return this.sql('SELECT * FROM users WHERE email = ? COLLATE NOCASE').get(email.trim()) as UserRecord | undefined;
  }

  count(): number {
    return (this.sql('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  }

  setOnboardingCompleted(userId: string, completed: boolean): UserRecord {
    const now = nowIso();
    // Completing twice keeps the first completion time; resetting clears it.
    if (completed) {
      this.sql('UPDATE users SET onboarding_completed_at = COALESCE(onboarding_completed_at, ?), updated_at = ? WHERE id = ?').run(now, now, userId);
    } else {
      this.sql('UPDATE users SET onboarding_completed_at = NULL, updated_at = ? WHERE id = ?').run(now, userId);
    }
    return this.findById(userId)!;
  }

  markInitialized(userId: string): void {
    this.sql('UPDATE users SET initialized_at = COALESCE(initialized_at, ?) WHERE id = ?').run(nowIso(), userId);
  }
}
