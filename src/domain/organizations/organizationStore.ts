import { newId, nowIso } from '../../util/ids.ts';
import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { forUpdate } from '../../db/metadata/rowLock.ts';
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
  constructor(private readonly metadata: MetadataStore) {}

  create(input: NewOrganization): Promise<OrganizationRecord> {
    return this.metadata.transaction((trx) => this.insert(trx, input));
  }

  /** The organization and its owner row, within the caller's transaction. */
  async insert(trx: MetadataDb, input: NewOrganization): Promise<OrganizationRecord> {
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
    await trx.insertInto('organizations').values(org).execute();
    await trx.insertInto('org_members').values({ org_id: org.id, user_id: input.createdBy, role: 'owner', created_at: now }).execute();
    return org;
  }

  find(id: string): Promise<OrganizationRecord | undefined> {
    return this.metadata.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The default organization `POST /auth/initialize` made for this user, while it exists and they belong to it. */
  findDefaultOf(userId: string): Promise<OrganizationRecord | undefined> {
    return this.metadata.db
      .selectFrom('organizations as o')
      .innerJoin('org_members as m', (j) => j.onRef('m.org_id', '=', 'o.id').on('m.user_id', '=', userId))
      .selectAll('o')
      .where('o.created_by', '=', userId)
      .where('o.is_default', '=', 1)
      .orderBy('o.created_at')
      .orderBy('o.id')
      .limit(1)
      .executeTakeFirst();
  }

  async listForUser(userId: string, page: Page): Promise<Paged<MemberOrganization>> {
    const db = this.metadata.db;
    const rows = await db
      .selectFrom('organizations as o')
      .innerJoin('org_members as m', (j) => j.onRef('m.org_id', '=', 'o.id').on('m.user_id', '=', userId))
      .selectAll('o')
      .select('m.role')
      .select((eb) => eb.selectFrom('org_members as c').whereRef('c.org_id', '=', 'o.id').select((e) => e.fn.countAll<number>().as('n')).as('member_count'))
      .orderBy('o.created_at')
      .orderBy('o.id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    const { n } = await db
      .selectFrom('org_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return { items: rows.map((r) => ({ ...r, member_count: Number(r.member_count) })), total: Number(n) };
  }

  async update(id: string, changes: { name?: string; description?: string }): Promise<OrganizationRecord> {
    const current = await this.find(id);
    if (!current) throw new DomainError('NOT_FOUND', 'Organization not found.');
    // Only the named columns: a rename and a new description at once both stay.
    const updated = await this.metadata.db.updateTable('organizations').set({ ...defined({ name: changes.name, description: changes.description }), updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst();
    if (!updated) throw new DomainError('NOT_FOUND', 'Organization not found.');
    return updated;
  }

  /** Deleting is refused while projects remain: their content would otherwise go with it silently. */
  async delete(id: string): Promise<void> {
    await this.metadata.transaction(async (trx) => {
      // A project made meanwhile waits for this transaction (its org row is locked), or fails on its missing organization.
      await trx.selectFrom('organizations').select('id').where('id', '=', id).$call(forUpdate(this.metadata.engine)).executeTakeFirst();
      const { n } = await trx
        .selectFrom('projects')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', id)
        .executeTakeFirstOrThrow();
      if (Number(n) > 0) {
        // The request is well-formed; the organization's state conflicts with it (409).
        throw new DomainError('CONFLICT', `The organization still has ${n} project(s); delete or move them first.`, { projects: Number(n) });
      }
      await trx.deleteFrom('organizations').where('id', '=', id).execute();
    });
  }
}
