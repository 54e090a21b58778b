import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { forUpdate } from '../../db/metadata/rowLock.ts';
import type { OrganizationRecord } from '../organizations/organizationRecord.ts';
import type { OrganizationStore } from '../organizations/organizationStore.ts';
import type { ProjectRecord } from '../projects/projectRecord.ts';
import type { ProjectStore } from '../projects/projectStore.ts';
import type { UserRecord, UserStore } from './userStore.ts';

export interface InitializationResult {
  /** True only for the call that made the default organization. */
  created: boolean;
  /** The user's default organization and its first project; null once the user has deleted them. */
  organization: OrganizationRecord | null;
  project: ProjectRecord | null;
}

/**
 * `POST /auth/initialize`: the first call gives a user a default organization with a first
 * project; every later call changes nothing and reports the same pair. The check and the
 * inserts share one metadata transaction that first locks the user's row, so concurrent first
 * calls create a single organization.
 */
export class UserInitializer {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly users: UserStore,
    private readonly organizations: OrganizationStore,
    private readonly projects: ProjectStore,
  ) {}

  async initialize(user: UserRecord): Promise<InitializationResult> {
    const made = await this.metadata.transaction(async (trx) => {
      const row = await trx.selectFrom('users').select('initialized_at').where('id', '=', user.id).$call(forUpdate(this.metadata.engine)).executeTakeFirst();
      if (!row || row.initialized_at) return null;
      const name = user.display_name || user.email.split('@')[0] || user.email;
      const organization = await this.organizations.insert(trx, {
        name: `${name}'s organization`,
        description: 'Created when the account was set up.',
        createdBy: user.id,
        isDefault: true,
      });
      const project = await this.projects.insert(trx, { orgId: organization.id, name: 'First project', description: '', createdBy: user.id });
      await this.users.markInitialized(trx, user.id);
      return { organization, project };
    });
    if (!made) return { created: false, ...(await this.defaultsOf(user.id)) };
    await this.projects.attachRepository(made.project.id, () =>
      this.metadata.transaction(async (trx) => {
        await trx.deleteFrom('projects').where('id', '=', made.project.id).execute();
        await trx.deleteFrom('organizations').where('id', '=', made.organization.id).execute();
        await trx.updateTable('users').set({ initialized_at: null }).where('id', '=', user.id).execute();
      }),
    );
    return { created: true, ...made };
  }

  async defaultsOf(userId: string): Promise<{ organization: OrganizationRecord | null; project: ProjectRecord | null }> {
    const organization = (await this.organizations.findDefaultOf(userId)) ?? null;
    return { organization, project: organization ? ((await this.projects.firstOf(organization.id)) ?? null) : null };
  }
}
