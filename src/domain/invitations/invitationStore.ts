import { createHash, randomBytes } from 'node:crypto';
import { newId, nowIso } from '../../util/ids.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import type { OrgRole } from '../roles.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

export interface InvitationRecord {
  id: string;
  org_id: string;
  email: string;
  role: OrgRole;
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
}

/** Invitation tokens are 256 random bits, so a plain SHA-256 is enough to keep them unusable at rest. */
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Invitations to an organization: a single-use token that expires, stored only as its hash.
 * The token is returned once, at creation.
 */
export class InvitationStore {
  constructor(private readonly db: Db) {}

  create(input: { orgId: string; email: string; role: OrgRole; invitedBy: string; ttlMs?: number }): { invitation: InvitationRecord; token: string } {
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
    inTransaction(this.db, () => {
      const member = this.db
        .prepare('SELECT 1 FROM org_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = ? AND u.email = ? COLLATE NOCASE')
        .get(input.orgId, invitation.email);
      if (member) throw new DomainError('CONFLICT', `${invitation.email} is already a member of this organization.`);
      // A new invitation replaces the pending one for the same address: only the latest link works.
      this.db.prepare('DELETE FROM invitations WHERE org_id = ? AND email = ? COLLATE NOCASE AND accepted_at IS NULL').run(input.orgId, invitation.email);
      this.db
        .prepare(
          `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, created_at, expires_at)
           VALUES (@id, @org_id, @email, @role, @token_hash, @invited_by, @created_at, @expires_at)`,
        )
        .run(invitation);
    });
    return { invitation, token };
  }

  /** Invitations neither accepted nor expired. */
  listPending(orgId: string, page: Page): Paged<InvitationRecord> {
    const where = 'WHERE org_id = ? AND accepted_at IS NULL AND expires_at > ?';
    const now = nowIso();
    const items = this.db
      .prepare(`SELECT * FROM invitations ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`)
      .all(orgId, now, page.limit, page.offset) as InvitationRecord[];
    const { n } = this.db.prepare(`SELECT COUNT(*) AS n FROM invitations ${where}`).get(orgId, now) as { n: number };
    return { items, total: n };
  }

  /**
   * The signed-in user joins the organization with the invited role. The invitation is bound
   * to its address, so a forwarded or leaked link does not let someone else in.
   */
  accept(token: string, user: { id: string; email: string }): InvitationRecord {
    return inTransaction(this.db, () => {
      const inv = this.db.prepare('SELECT * FROM invitations WHERE token_hash = ?').get(hashToken(token)) as InvitationRecord | undefined;
      if (!inv) throw new DomainError('NOT_FOUND', 'This invitation link is not valid.');
      if (inv.accepted_at) throw new DomainError('CONFLICT', 'This invitation has already been used.', { reason: 'used' });
      if (Date.parse(inv.expires_at) <= Date.now()) {
        throw new DomainError('CONFLICT', 'This invitation has expired; ask for a new one.', { reason: 'expired', expired_at: inv.expires_at });
      }
      if (inv.email.toLowerCase() !== user.email.toLowerCase()) {
        throw new DomainError('FORBIDDEN', 'This invitation was sent to another address; sign in with the invited account to accept it.');
      }
      const member = this.db.prepare('SELECT 1 FROM org_members WHERE org_id = ? AND user_id = ?').get(inv.org_id, user.id);
      if (member) throw new DomainError('CONFLICT', 'You are already a member of this organization.', { reason: 'already_member' });
      const now = nowIso();
      this.db.prepare('UPDATE invitations SET accepted_at = ?, accepted_by = ? WHERE id = ?').run(now, user.id, inv.id);
      this.db.prepare('INSERT INTO org_members (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').run(inv.org_id, user.id, inv.role, now);
      return { ...inv, accepted_at: now, accepted_by: user.id };
    });
  }
}
