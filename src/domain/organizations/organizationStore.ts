import { newId, nowIso } from '../../util/ids.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import { DomainError } from '../../errors/domainError.ts';
import { defined } from '../defined.ts';
import type { Page, Paged } from '../pagination.ts';
import type { MemberOrganization, OrganizationRecord } from './organizationRecord.ts';

export interface NewOrganization {
  name: string;
  description?: string;
  createdBy: string;
  isDefault?: boolean;
}

/** Organizations themselves: creation (with the creator as owner), look-up, listing, update, deletion. */
export class OrganizationStore {
  constructor(private readonly db: Db) {}

  create(input: NewOrganization): OrganizationRecord {
    const now = nowIso();
    const org: OrganizationRecord = {
      id: newId('org'),
      name: input.name,
      description: input.description ?? '',
      is_default: input.isDefault ? 1 : 0,
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
    };
    inTransaction(this.db, () => {
      this.db
        .prepare(
          `INSERT INTO organizations (id, name, description, is_default, created_by, created_at, updated_at)
           VALUES (@id, @name, @description, @is_default, @created_by, @created_at, @updated_at)`,
        )
        .run(org);
      this.db
        .prepare("INSERT INTO org_members (org_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)")
        .run(org.id, input.createdBy, now);
    });
    return org;
  }

  find(id: string): OrganizationRecord | undefined {
    return this.db.prepare('SELECT * FROM organizations WHERE id = ?').get(id) as OrganizationRecord | undefined;
  }

  /** The default organization `POST /auth/initialize` made for this user, while it exists and they belong to it. */
  findDefaultOf(userId: string): OrganizationRecord | undefined {
    return this.db
      .prepare(
        `SELECT o.* FROM organizations o JOIN org_members m ON m.org_id = o.id AND m.user_id = @userId
         WHERE o.created_by = @userId AND o.is_default = 1 ORDER BY o.created_at, o.id LIMIT 1`,
      )
      .get({ userId }) as OrganizationRecord | undefined;
  }

  listForUser(userId: string, page: Page): Paged<MemberOrganization> {
    const items = this.db
      .prepare(
        `SELECT o.*, m.role, (SELECT COUNT(*) FROM org_members c WHERE c.org_id = o.id) AS member_count
         FROM organizations o JOIN org_members m ON m.org_id = o.id AND m.user_id = ?
         ORDER BY o.created_at, o.id LIMIT ? OFFSET ?`,
      )
      .all(userId, page.limit, page.offset) as MemberOrganization[];
    const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM org_members WHERE user_id = ?').get(userId) as { n: number };
    return { items, total: n };
  }

  update(id: string, changes: { name?: string; description?: string }): OrganizationRecord {
    const current = this.find(id);
    if (!current) throw new DomainError('NOT_FOUND', 'Organization not found.');
    const next = { ...current, ...defined(changes), updated_at: nowIso() };
    this.db.prepare('UPDATE organizations SET name = @name, description = @description, updated_at = @updated_at WHERE id = @id').run(next);
    return next;
  }

  /** Deleting is refused while projects remain: their content would otherwise go with it silently. */
  delete(id: string): void {
    inTransaction(this.db, () => {
      const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM projects WHERE org_id = ?').get(id) as { n: number };
      if (n > 0) {
        // The request is well-formed; the organization's state conflicts with it (409).
        throw new DomainError('CONFLICT', `The organization still has ${n} project(s); delete or move them first.`, { projects: n });
      }
      this.db.prepare('DELETE FROM organizations WHERE id = ?').run(id);
    });
  }
}
