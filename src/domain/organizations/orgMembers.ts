import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { forUpdate } from '../../db/metadata/rowLock.ts';
import type { OrgRole } from '../roles.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { OrgMemberView } from './organizationRecord.ts';

/**
 * Membership of organizations. Every change keeps at least one owner: an organization without
 * one could never be administered or deleted again.
 */
export class OrgMembers {
  constructor(private readonly metadata: MetadataStore) {}

  async roleOf(orgId: string, userId: string, db: MetadataDb = this.metadata.db): Promise<OrgRole | null> {
    const row = await db.selectFrom('org_members').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
    return row?.role ?? null;
  }

  private views(db: MetadataDb, orgId: string) {
    return db
      .selectFrom('org_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.user_id', 'u.email', 'u.display_name', 'm.role', 'm.created_at'])
      .where('m.org_id', '=', orgId);
  }

  async list(orgId: string, page: Page): Promise<Paged<OrgMemberView>> {
    const items = await this.views(this.metadata.db, orgId).orderBy('m.created_at').orderBy('u.email').limit(page.limit).offset(page.offset).execute();
    const { n } = await this.metadata.db
      .selectFrom('org_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return { items, total: Number(n) };
  }

  get(orgId: string, userId: string, db: MetadataDb = this.metadata.db): Promise<OrgMemberView | undefined> {
    return this.views(db, orgId).where('m.user_id', '=', userId).executeTakeFirst();
  }

  changeRole(orgId: string, userId: string, role: OrgRole): Promise<OrgMemberView> {
    return this.metadata.transaction(async (trx) => {
      const current = await this.requireRole(trx, orgId, userId);
      if (current === 'owner' && role !== 'owner') await this.keepAnOwner(trx, orgId, 'demoted');
      await trx.updateTable('org_members').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      return (await this.get(orgId, userId, trx))!;
    });
  }

  /**
   * Removes a member (also used for leaving). Their explicit roles on the organization's
   * projects go too: leaving an organization means losing access to its projects.
   */
  async remove(orgId: string, userId: string, reason: 'removed' | 'leave' = 'removed'): Promise<void> {
    await this.metadata.transaction(async (trx) => {
      const current = await this.requireRole(trx, orgId, userId);
      if (current === 'owner') await this.keepAnOwner(trx, orgId, reason);
      await trx.deleteFrom('org_members').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      await trx
        .deleteFrom('project_members')
        .where('user_id', '=', userId)
        .where('project_id', 'in', (eb) => eb.selectFrom('projects').select('id').where('org_id', '=', orgId))
        .execute();
    });
  }

  private async requireRole(trx: MetadataDb, orgId: string, userId: string): Promise<OrgRole> {
    const role = await this.roleOf(orgId, userId, trx);
    if (!role) throw new DomainError('NOT_FOUND', 'Member not found.');
    return role;
  }

  /**
   * Called inside the transaction that would take an owner away. The owners' rows are locked
   * first, so two owners leaving at once take turns and the second sees the first gone.
   */
  private async keepAnOwner(trx: MetadataDb, orgId: string, what: 'demoted' | 'removed' | 'leave'): Promise<void> {
    const owners = await trx.selectFrom('org_members').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').$call(forUpdate(this.metadata.engine)).execute();
    if (owners.length > 1) return;
    const action = what === 'leave' ? 'leave' : what === 'demoted' ? 'be demoted' : 'be removed';
    throw new DomainError(
      'CONFLICT',
      `The last owner of an organization cannot ${action}; make another member an owner first.`,
      { reason: 'last_owner' },
    );
  }
}
