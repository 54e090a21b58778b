import { createHash, randomBytes } from 'node:crypto';
import { newId, nowIso } from '../../util/ids.ts';
import { sql } from 'kysely';
import { lockKey } from '../../db/metadata/keyLock.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { forUpdate } from '../../db/metadata/rowLock.ts';
import { sameEmail } from '../users/userStore.ts';
import type { OrgRole } from '../roles.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { InvitationsTable } from '../../db/metadata/tables/auth.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

export type InvitationRecord = InvitationsTable;

/** Invitation tokens are 256 random bits, so a plain SHA-256 is enough to keep them unusable at rest. */
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Invitations to an organization: a single-use token that expires, stored only as its hash.
 * The token is returned once, at creation.
 */
export class InvitationStore {
  constructor(private readonly metadata: MetadataStore) {}

  async create(input: { orgId: string; email: string; role: OrgRole; invitedBy: string; ttlMs?: number }): Promise<{ invitation: InvitationRecord; token: string }> {
    const token = `cnsinv_${randomBytes(32).toString('base64url')}`;
    const now = new Date();
    const invitation: InvitationRecord = {
      id: newId('inv'),
      org_id: input.orgId,
      email: input.email.trim(),
      role: input.role,
      token_hash: hashToken(token),
      invited_by: input.invitedBy,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + (input.ttlMs ?? INVITATION_TTL_MS)).toISOString(),
      accepted_at: null,
      accepted_by: null,
    };
    await this.metadata.transaction(async (trx) => {
      // Invitations of one organization take turns: only the latest link for an address works.
      await lockKey(this.metadata.engine, trx, `invitations:${input.orgId}`);
      const member = await trx
        .selectFrom('org_members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select('m.user_id')
        .where('m.org_id', '=', input.orgId)
        .where(sql<boolean>`lower(u.email) = lower(${invitation.email})`)
        .executeTakeFirst();
      if (member) throw new DomainError('CONFLICT', `${invitation.email} is already a member of this organization.`);
      // A new invitation replaces the pending one for the same address: only the latest link works.
      await trx.deleteFrom('invitations').where('org_id', '=', input.orgId).where(sameEmail(invitation.email)).where('accepted_at', 'is', null).execute();
      await trx.insertInto('invitations').values(invitation).execute();
    });
    return { invitation, token };
  }

  /** Invitations neither accepted nor expired. */
  async listPending(orgId: string, page: Page): Promise<Paged<InvitationRecord>> {
    const pending = this.metadata.db.selectFrom('invitations').where('org_id', '=', orgId).where('accepted_at', 'is', null).where('expires_at', '>', nowIso());
    const items = await pending.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute();
    const { n } = await pending.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { items, total: Number(n) };
  }

  /**
   * The signed-in user joins the organization with the invited role. The invitation is bound
   * to its address, so a forwarded or leaked link does not let someone else in.
   */
  accept(token: string, user: { id: string; email: string }): Promise<InvitationRecord> {
    return this.metadata.transaction(async (trx) => {
      const inv = await trx.selectFrom('invitations').selectAll().where('token_hash', '=', hashToken(token)).$call(forUpdate(this.metadata.engine)).executeTakeFirst();
      if (!inv) throw new DomainError('NOT_FOUND', 'This invitation link is not valid.');
      if (inv.accepted_at) throw new DomainError('CONFLICT', 'This invitation has already been used.', { reason: 'used' });
      if (Date.parse(inv.expires_at) <= Date.now()) {
        throw new DomainError('CONFLICT', 'This invitation has expired; ask for a new one.', { reason: 'expired', expired_at: inv.expires_at });
      }
      if (inv.email.toLowerCase() !== user.email.toLowerCase()) {
        throw new DomainError('FORBIDDEN', 'This invitation was sent to another address; sign in with the invited account to accept it.');
      }
      const now = nowIso();
      const joined = await trx
        .insertInto('org_members')
        .values({ org_id: inv.org_id, user_id: user.id, role: inv.role, created_at: now })
        .onConflict((oc) => oc.columns(['org_id', 'user_id']).doNothing())
        .executeTakeFirst();
      if (!joined.numInsertedOrUpdatedRows) throw new DomainError('CONFLICT', 'You are already a member of this organization.', { reason: 'already_member' });
      await trx.updateTable('invitations').set({ accepted_at: now, accepted_by: user.id }).where('id', '=', inv.id).execute();
      return { ...inv, accepted_at: now, accepted_by: user.id };
    });
  }
}
