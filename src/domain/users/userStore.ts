import { sql } from 'kysely';
import { MetadataCache } from '../../db/metadata/metadataCache.ts';
import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { isUniqueViolation } from '../../db/metadata/uniqueViolation.ts';
import { newId, nowIso } from '../../util/ids.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../auth/passwords.ts';
import type { UsersTable } from '../../db/metadata/tables/auth.ts';

export type UserRecord = UsersTable;

export class EmailTakenError extends Error {
  readonly code = 'CONFLICT';
  constructor(email: string) {
    super(`A user with the email ${email} already exists.`);
  }
}

/** Emails compare without case on both engines (SQLite's NOCASE column, PostgreSQL's unique index on lower(email)). */
export const sameEmail = (email: string) => sql<boolean>`lower(email) = lower(${email.trim()})`;

/** Users: creation with a hashed password, and the look-ups authentication needs. */
export class UserStore {
  /** findById runs on every request of a signed-in user. */
  private readonly byId: MetadataCache<string, UserRecord>;

  /** `passwordHashCost`: log2 of scrypt's N for the passwords it hashes (settings.passwordHashCost). */
  constructor(
    private readonly metadata: MetadataStore,
    private readonly options: { passwordHashCost?: number } = {},
  ) {
    this.byId = new MetadataCache(metadata.changes, 10_000);
  }

  async create(input: { email: string; password: string; displayName?: string; isAdmin?: boolean }): Promise<UserRecord> {
    if (await this.findByEmail(input.email)) throw new EmailTakenError(input.email);
    const now = nowIso();
    const user: UserRecord = {
      id: newId('usr'),
      email: input.email.trim(),
      password_hash: await hashPassword(input.password, this.options.passwordHashCost),
      display_name: input.displayName ?? input.email.split('@')[0] ?? '',
      is_admin: input.isAdmin ? 1 : 0,
      initialized_at: null,
      onboarding_completed_at: null,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.metadata.db.insertInto('users').values(user).execute();
    } catch (err) {
      if (isUniqueViolation(err, 'email')) throw new EmailTakenError(input.email);
      throw err;
    }
    return user;
  }

  findById(id: string): Promise<UserRecord | undefined> {
    return this.byId.get(id, () => this.metadata.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst());
  }

  /**
   * The user with this email and password, or null. An unknown email burns a hash of the cost a
   * password gets, so that the time taken does not reveal which emails exist.
   */
  async signIn(email: string, password: string): Promise<UserRecord | null> {
    const user = await this.findByEmail(email);
    const valid = await verifyPassword(password, user?.password_hash ?? dummyPasswordHash(this.options.passwordHashCost));
    return user && valid ? user : null;
  }

  findByEmail(email: string): Promise<UserRecord | undefined> {
    return this.metadata.db.selectFrom('users').selectAll().where(sameEmail(email)).executeTakeFirst();
  }

  async count(): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  async setOnboardingCompleted(userId: string, completed: boolean): Promise<UserRecord> {
    const now = nowIso();
    // Completing twice keeps the first completion time; resetting clears it.
    await this.metadata.db
      .updateTable('users')
      .set((eb) => ({ onboarding_completed_at: completed ? eb.fn.coalesce('onboarding_completed_at', eb.val(now)) : null, updated_at: now }))
      .where('id', '=', userId)
      .execute();
    return (await this.findById(userId))!;
  }

  /** Within the caller's transaction (the user's initialization). */
  async markInitialized(trx: MetadataDb, userId: string): Promise<void> {
    await trx
      .updateTable('users')
      .set((eb) => ({ initialized_at: eb.fn.coalesce('initialized_at', eb.val(nowIso())) }))
      .where('id', '=', userId)
      .execute();
  }
}
