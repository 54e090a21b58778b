import type { Statement } from 'better-sqlite3';
import { newId, nowIso } from '../../util/ids.ts';
import type { Db } from '../../db/database.ts';
import { FreshCache } from '../../db/freshCache.ts';
import { effectiveProjectRole, type OrgRole, type ProjectRole } from '../roles.ts';
import { defined } from '../defined.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { ProjectRecord } from './projectRecord.ts';
import type { ProjectRepositories } from './projectRepository.ts';
import type { ProjectView } from './projectView.ts';

interface ProjectRow extends ProjectRecord {
  org_role: OrgRole | null;
  project_role: ProjectRole | null;
}

/** Projects: their records and the content repository that lives and dies with each one. */
export class ProjectStore {
  private findStatement: Statement | undefined;
  /** find runs on every project request of an access key. */
  private readonly byId: FreshCache<string, ProjectRecord>;

  constructor(
    private readonly db: Db,
    private readonly repositories: ProjectRepositories,
  ) {
    this.byId = new FreshCache(db, 10_000);
  }

  /** The row goes first (content storage may refer to it); if the repository cannot be made, the row goes again. */
  async create(input: { orgId: string; name: string; description?: string; createdBy: string | null }): Promise<ProjectRecord> {
    const project = this.insert(input);
    await this.attachRepository(project.id, () => this.db.prepare('DELETE FROM projects WHERE id = ?').run(project.id));
    return project;
  }

  /** Inserts the row only; callers inside a larger transaction attach the repository afterwards. */
  insert(input: { orgId: string; name: string; description?: string; createdBy: string | null }): ProjectRecord {
    const now = nowIso();
    const project: ProjectRecord = {
      id: newId('prj'),
      org_id: input.orgId,
      name: input.name,
      description: input.description ?? '',
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
    };
    this.db
      .prepare(
        `INSERT INTO projects (id, org_id, name, description, created_by, created_at, updated_at)
         VALUES (@id, @org_id, @name, @description, @created_by, @created_at, @updated_at)`,
      )
      .run(project);
    return project;
  }

  /** Creates the content repository of an inserted project; on failure runs `undo` and rethrows. */
  async attachRepository(projectId: string, undo: () => void): Promise<void> {
    try {
      await this.repositories.createProject(projectId);
    } catch (err) {
      await this.repositories.deleteProject(projectId).catch(() => undefined);
      undo();
      throw err;
    }
  }

  /** On every content request of a key: kept while the database stays unchanged. */
  find(id: string): ProjectRecord | undefined {
    return this.byId.get(id, () => {
      this.findStatement ??= this.db.prepare('SELECT * FROM projects WHERE id = ?');
      return this.findStatement.get(id) as ProjectRecord | undefined;
    });
  }

  /** The oldest project of an organization (the "first project" of a default organization). */
  firstOf(orgId: string): ProjectRecord | undefined {
    return this.db.prepare('SELECT * FROM projects WHERE org_id = ? ORDER BY created_at, id LIMIT 1').get(orgId) as ProjectRecord | undefined;
  }

  /** Projects the user reaches through an organization role or an explicit project role. */
  listVisible(userId: string, orgId: string | undefined, page: Page): Paged<ProjectView> {
    const from = `FROM projects p
      LEFT JOIN org_members om ON om.org_id = p.org_id AND om.user_id = @userId
      LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = @userId
      WHERE (om.role IS NOT NULL OR pm.role IS NOT NULL) AND (@orgId IS NULL OR p.org_id = @orgId)`;
    const params = { userId, orgId: orgId ?? null };
    const rows = this.db
      .prepare(`SELECT p.*, om.role AS org_role, pm.role AS project_role ${from} ORDER BY p.created_at, p.id LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: page.limit, offset: page.offset }) as ProjectRow[];
    const { n } = this.db.prepare(`SELECT COUNT(*) AS n ${from}`).get(params) as { n: number };
    const items = rows.map(({ org_role, project_role, ...project }) => ({
      ...project,
      role: effectiveProjectRole(org_role, project_role),
    }));
    return { items, total: n };
  }

  update(id: string, changes: { name?: string; description?: string }): ProjectRecord {
    const current = this.find(id);
    if (!current) throw new DomainError('NOT_FOUND', 'Project not found.');
    const next = { ...current, ...defined(changes), updated_at: nowIso() };
    this.db.prepare('UPDATE projects SET name = @name, description = @description, updated_at = @updated_at WHERE id = @id').run(next);
    return next;
  }

  /**
   * Permanent: the content goes first, so a failure leaves the project in place and the
   * deletion can be retried, rather than leaving data behind that nothing points to.
   */
  async delete(id: string): Promise<void> {
    await this.repositories.deleteProject(id);
    this.db.prepare('DELETE FROM projects WHERE id = ?').run(id);
  }
}
