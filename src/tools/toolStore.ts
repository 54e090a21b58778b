import type { Statement } from 'better-sqlite3';
import { newId, nowIso } from '../util/ids.ts';
import type { Db } from '../db/database.ts';

/** A tool as stored (spec 4.9); `node_id` null means the project's root. */
export interface ToolRecord {
  id: string;
  project_id: string;
  node_id: string | null;
  name: string;
  description: string;
  type: string;
  config: Record<string, unknown>;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

type Row = Omit<ToolRecord, 'config'> & { config: string };

const fromRow = (r: Row): ToolRecord => ({ ...r, config: JSON.parse(r.config) as Record<string, unknown> });

/** The `tools` table. Authorization is the caller's business (routes, callTool). */
export class ToolStore {
  private readonly s: Record<string, Statement>;

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      find: p('SELECT * FROM tools WHERE id = ?'),
      byProject: p('SELECT * FROM tools WHERE project_id = ? ORDER BY created_at, id'),
      byNode: p('SELECT * FROM tools WHERE node_id = ? ORDER BY created_at, id'),
      byOrg: p('SELECT t.* FROM tools t JOIN projects p ON p.id = t.project_id WHERE p.org_id = ? ORDER BY t.created_at, t.id'),
      insert: p(`INSERT INTO tools (id, project_id, node_id, name, description, type, config, created_by, created_at, updated_at)
        VALUES (@id, @project_id, @node_id, @name, @description, @type, @config, @created_by, @created_at, @updated_at)`),
      update: p('UPDATE tools SET name = @name, description = @description, config = @config, updated_at = @updated_at WHERE id = @id'),
      remove: p('DELETE FROM tools WHERE id = ?'),
      searchProjects: p(`SELECT DISTINCT t.project_id FROM tools t JOIN projects p ON p.id = t.project_id WHERE t.type = 'search'`),
      searchCount: p(`SELECT COUNT(*) AS n FROM tools WHERE project_id = ? AND type = 'search'`),
    };
  }

  find(id: string): ToolRecord | null {
    const r = this.s.find.get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  listByProject(projectId: string): ToolRecord[] {
    return (this.s.byProject.all(projectId) as Row[]).map(fromRow);
  }

  listByNode(nodeId: string): ToolRecord[] {
    return (this.s.byNode.all(nodeId) as Row[]).map(fromRow);
  }

  listByOrg(orgId: string): ToolRecord[] {
    return (this.s.byOrg.all(orgId) as Row[]).map(fromRow);
  }

  create(input: Pick<ToolRecord, 'project_id' | 'node_id' | 'name' | 'description' | 'type' | 'config' | 'created_by'>): ToolRecord {
    const now = nowIso();
    const record: ToolRecord = { id: newId('tool'), ...input, created_at: now, updated_at: now };
    this.s.insert.run({ ...record, config: JSON.stringify(record.config) });
    return record;
  }

  update(id: string, changes: Partial<Pick<ToolRecord, 'name' | 'description' | 'config'>>): ToolRecord {
    const current = this.find(id)!;
    const next: ToolRecord = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)), updated_at: nowIso() };
    this.s.update.run({ ...next, config: JSON.stringify(next.config) });
    return next;
  }

  delete(id: string): void {
    this.s.remove.run(id);
  }

  /** Projects the search indexer follows. */
  projectsWithSearch(): string[] {
    return (this.s.searchProjects.all() as { project_id: string }[]).map((r) => r.project_id);
  }

  searchToolCount(projectId: string): number {
    return (this.s.searchCount.get(projectId) as { n: number }).n;
  }
}
