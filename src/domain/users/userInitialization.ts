import { inTransaction, type Db } from '../../db/database.ts';
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
 * inserts share one write transaction, so concurrent first calls create a single organization.
 */
export class UserInitializer {
  constructor(
    private readonly db: Db,
    private readonly users: UserStore,
    private readonly organizations: OrganizationStore,
    private readonly projects: ProjectStore,
  ) {}

  async initialize(user: UserRecord): Promise<InitializationResult> {
    const made = inTransaction(this.db, () => {
      if (this.users.findById(user.id)?.initialized_at) return null;
      const name = user.display_name || user.email.split('@')[0] || user.email;
      const organization = this.organizations.create({
        name: `${name}'s organization`,
        description: 'Created when the account was set up.',
        createdBy: user.id,
        isDefault: true,
      });
      const project = this.projects.insert({ orgId: organization.id, name: 'First project', description: '', createdBy: user.id });
      this.users.markInitialized(user.id);
      return { organization, project };
    });
    if (!made) return { created: false, ...this.defaultsOf(user.id) };
    await this.projects.attachRepository(made.project.id, () =>
      inTransaction(this.db, () => {
        this.db.prepare('DELETE FROM projects WHERE id = ?').run(made.project.id);
        this.db.prepare('DELETE FROM organizations WHERE id = ?').run(made.organization.id);
        this.db.prepare('UPDATE users SET initialized_at = NULL WHERE id = ?').run(user.id);
      }),
    );
    return { created: true, ...made };
  }

  defaultsOf(userId: string): { organization: OrganizationRecord | null; project: ProjectRecord | null } {
    const organization = this.organizations.findDefaultOf(userId) ?? null;
    return { organization, project: organization ? (this.projects.firstOf(organization.id) ?? null) : null };
  }
}
