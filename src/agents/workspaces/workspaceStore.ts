import { inTransaction, type Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import type { WritableNodeType } from '../../content/types.ts';
import { DomainError } from '../../errors/domainError.ts';
import { nowIso } from '../../util/ids.ts';

/** An agent's workspace: which project, at which version it was opened, over which folders. */
export interface WorkspaceRecord {
  agentId: string;
  projectId: string;
  /** The project version when the workspace was opened. */
  baseVersion: number;
  /** The agent's read_write access paths at open ('' = the whole project): drafts stay inside them. */
  roots: string[];
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** A drafted path (see migration 013 for what each field means). */
export interface DraftEntry {
  path: string;
  action: 'written' | 'deleted';
  type: WritableNodeType | 'folder';
  baseVersion: number | null;
  baseNodeId: string | null;
  baseProjectVersion: number;
  /** Bytes of a written file's content (0 otherwise). */
  size: number;
  updatedAt: string;
}

/** A drafted path with its content (written files). */
export interface DraftRow extends DraftEntry {
  content: Buffer | null;
}

type WorkspaceSqlRow = { agent_id: string; project_id: string; base_version: number; roots: string; created_by: string; created_at: string; updated_at: string };
type EntrySqlRow = { path: string; action: DraftEntry['action']; type: DraftEntry['type']; base_version: number | null; base_node_id: string | null; base_project_version: number; size: number; updated_at: string };

const toRecord = (r: WorkspaceSqlRow): WorkspaceRecord => ({
  agentId: r.agent_id,
  projectId: r.project_id,
  baseVersion: r.base_version,
  roots: JSON.parse(r.roots) as string[],
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toEntry = (r: EntrySqlRow): DraftEntry => ({
  path: r.path,
  action: r.action,
  type: r.type,
  baseVersion: r.base_version,
  baseNodeId: r.base_node_id,
  baseProjectVersion: r.base_project_version,
  size: r.size,
  updatedAt: r.updated_at,
});
const ENTRY = 'path, action, type, base_version, base_node_id, base_project_version, ifnull(length(content), 0) AS size, updated_at';

/** The `agent_workspaces` and `agent_workspace_files` tables. Authorization is the caller's. */
export class WorkspaceStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
  }

  find(agentId: string): WorkspaceRecord | null {
    const r = this.sql('SELECT * FROM agent_workspaces WHERE agent_id = ?').get(agentId) as WorkspaceSqlRow | undefined;
    return r ? toRecord(r) : null;
  }

  /** Opens a workspace; CONFLICT when the agent has one already (the primary key decides, whoever races). */
  create(input: Omit<WorkspaceRecord, 'createdAt' | 'updatedAt'>): WorkspaceRecord {
    const now = nowIso();
    const changes = this.sql(
      `INSERT INTO agent_workspaces (agent_id, project_id, base_version, roots, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (agent_id) DO NOTHING`,
    ).run(input.agentId, input.projectId, input.baseVersion, JSON.stringify(input.roots), input.createdBy, now, now).changes;
    if (changes === 0) throw new DomainError('CONFLICT', 'This agent already has a workspace: complete or discard it first.', { agent_id: input.agentId });
    return { ...input, createdAt: now, updatedAt: now };
  }

  /** Removes the workspace and its drafts; false when there was none. */
  delete(agentId: string): boolean {
    return this.sql('DELETE FROM agent_workspaces WHERE agent_id = ?').run(agentId).changes > 0;
  }

  /** The drafted paths without their content, by path. */
  entries(agentId: string): DraftEntry[] {
    return (this.sql(`SELECT ${ENTRY} FROM agent_workspace_files WHERE agent_id = ? ORDER BY path`).all(agentId) as EntrySqlRow[]).map(toEntry);
  }

  /** The drafted paths with their content, by path. */
  rows(agentId: string): DraftRow[] {
    const rows = this.sql(`SELECT ${ENTRY}, content FROM agent_workspace_files WHERE agent_id = ? ORDER BY path`).all(agentId) as (EntrySqlRow & { content: Buffer | null })[];
    return rows.map((r) => ({ ...toEntry(r), content: r.content }));
  }

  content(agentId: string, path: string): Buffer | null {
    const r = this.sql('SELECT content FROM agent_workspace_files WHERE agent_id = ? AND path = ?').get(agentId, path) as { content: Buffer | null } | undefined;
    return r?.content ?? null;
  }

  /** Removes the rows at `remove` and writes `upsert`, in one transaction, and marks the workspace updated. */
  change(agentId: string, remove: readonly string[], upsert: readonly Omit<DraftRow, 'size' | 'updatedAt'>[]): void {
    const now = nowIso();
    inTransaction(this.db, () => {
      const del = this.sql('DELETE FROM agent_workspace_files WHERE agent_id = ? AND path = ?');
      for (const path of remove) del.run(agentId, path);
      const put = this.sql(
        `INSERT INTO agent_workspace_files (agent_id, path, action, type, content, base_version, base_node_id, base_project_version, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, path) DO UPDATE SET action = excluded.action, type = excluded.type, content = excluded.content,
           base_version = excluded.base_version, base_node_id = excluded.base_node_id, base_project_version = excluded.base_project_version,
           updated_at = excluded.updated_at`,
      );
      for (const r of upsert) put.run(agentId, r.path, r.action, r.type, r.content, r.baseVersion, r.baseNodeId, r.baseProjectVersion, now);
      this.sql('UPDATE agent_workspaces SET updated_at = ? WHERE agent_id = ?').run(now, agentId);
    });
  }
}
