import { inTransaction, type Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import type { OrgRole } from '../roles.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { OrgMemberView } from './organizationRecord.ts';

/**
 * Membership of organizations. Every change keeps at least one owner: an organization without
 * one could never be administered or deleted again.
 */
export class OrgMembers {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
  }

  roleOf(orgId: string, userId: string): OrgRole | null {
    const row = this.sql('SELECT role FROM org_members WHERE org_id = ? AND user_id = ?').get(orgId, userId) as
      | { role: OrgRole }
      | undefined;
    return row?.role ?? null;
  }

  list(orgId: string, page: Page): Paged<OrgMemberView> {
    const items = this.db
      .prepare(
        `SELECT m.user_id, u.email, u.display_name, m.role, m.created_at
         FROM org_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = ?
         ORDER BY m.created_at, u.email LIMIT ? OFFSET ?`,
      )
      .all(orgId, page.limit, page.offset) as OrgMemberView[];
    const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM org_members WHERE org_id = ?').get(orgId) as { n: number };
    return { items, total: n };
  }

  get(orgId: string, userId: string): OrgMemberView | undefined {
    return this.db
      .prepare(
        `SELECT m.user_id, u.email, u.display_name, m.role, m.created_at
         FROM org_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = ? AND m.user_id = ?`,
      )
      .get(orgId, userId) as OrgMemberView | undefined;
  }

  changeRole(orgId: string, userId: string, role: OrgRole): OrgMemberView {
    inTransaction(this.db, () => {
      const current = this.requireRole(orgId, userId);
      if (current === 'owner' && role !== 'owner') this.keepAnOwner(orgId, 'demoted');
      this.db.prepare('UPDATE org_members SET role = ? WHERE org_id = ? AND user_id = ?').run(role, orgId, userId);
    });
    return this.get(orgId, userId)!;
  }

  /**
   * Removes a member (also used for leaving). Their explicit roles on the organization's
   * projects go too: leaving an organization means losing access to its projects.
   */
  remove(orgId: string, userId: string, reason: 'removed' | 'leave' = 'removed'): void {
    inTransaction(this.db, () => {
      const current = this.requireRole(orgId, userId);
      if (current === 'owner') this.keepAnOwner(orgId, reason);
      this.db.prepare('DELETE FROM org_members WHERE org_id = ? AND user_id = ?').run(orgId, userId);
      this.db
        .prepare('DELETE FROM project_members WHERE user_id = ? AND project_id IN (SELECT id FROM projects WHERE org_id = ?)')
        .run(userId, orgId);
    });
  }

  private requireRole(orgId: string, userId: string): OrgRole {
    const role = this.roleOf(orgId, userId);
    if (!role) throw new DomainError('NOT_FOUND', 'Member not found.');
    return role;
  }

  /** Called inside the transaction that would take an owner away. */
  private keepAnOwner(orgId: string, what: 'demoted' | 'removed' | 'leave'): void {
    const { n } = this.db.prepare("SELECT COUNT(*) AS n FROM org_members WHERE org_id = ? AND role = 'owner'").get(orgId) as { n: number };
    if (n > 1) return;
    const action = what === 'leave' ? 'leave' : what === 'demoted' ? 'be demoted' : 'be removed';
    throw new DomainError(
      'CONFLICT',
      `The last owner of an organization cannot ${action}; make another member an owner first.`,
      { reason: 'last_owner' },
    );
  }
}
