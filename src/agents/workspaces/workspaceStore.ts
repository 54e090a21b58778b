import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { AgentWorkspacesTable } from '../../db/metadata/tables/agents.ts';
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

type EntrySqlRow = { path: string; action: DraftEntry['action']; type: DraftEntry['type']; base_version: number | null; base_node_id: string | null; base_project_version: number; size: number; updated_at: string };

const toRecord = (r: AgentWorkspacesTable): WorkspaceRecord => ({
  agentId: r.agent_id,
  projectId: r.project_id,
  baseVersion: Number(r.base_version),
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
  size: Number(r.size),
  updatedAt: r.updated_at,
});

/** The drafted paths of an agent, by path, without their content. */
const entriesOf = (db: MetadataDb, agentId: string) =>
  db
    .selectFrom('agent_workspace_files')
    .select(['path', 'action', 'type', 'base_version', 'base_node_id', 'base_project_version', 'updated_at'])
    .select((eb) => eb.fn.coalesce(eb.fn<number>('length', ['content']), eb.lit(0)).as('size'))
    .where('agent_id', '=', agentId)
    .orderBy('path');

/** The `agent_workspaces` and `agent_workspace_files` tables, on the metadata store. Authorization is the caller's. */
export class WorkspaceStore {
  constructor(private readonly metadata: MetadataStore) {}

  async find(agentId: string): Promise<WorkspaceRecord | null> {
    const r = await this.metadata.db.selectFrom('agent_workspaces').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /** Opens a workspace; CONFLICT when the agent has one already (the primary key decides, whoever races). */
  async create(input: Omit<WorkspaceRecord, 'createdAt' | 'updatedAt'>): Promise<WorkspaceRecord> {
    const now = nowIso();
    const made = await this.metadata.db
      .insertInto('agent_workspaces')
      .values({ agent_id: input.agentId, project_id: input.projectId, base_version: input.baseVersion, roots: JSON.stringify(input.roots), created_by: input.createdBy, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('agent_id').doNothing())
      .returning('agent_id')
      .executeTakeFirst();
    if (!made) throw new DomainError('CONFLICT', 'This agent already has a workspace: complete or discard it first.', { agent_id: input.agentId });
    return { ...input, createdAt: now, updatedAt: now };
  }

  /** Removes the workspace and its drafts; false when there was none. */
  async delete(agentId: string): Promise<boolean> {
    const r = await this.metadata.db.deleteFrom('agent_workspaces').where('agent_id', '=', agentId).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  /** The drafted paths without their content, by path. */
  async entries(agentId: string): Promise<DraftEntry[]> {
    return (await entriesOf(this.metadata.db, agentId).execute()).map(toEntry);
  }

  /** The drafted paths with their content, by path. */
  async rows(agentId: string): Promise<DraftRow[]> {
    const rows = await entriesOf(this.metadata.db, agentId).select('content').execute();
    return rows.map((r) => ({ ...toEntry(r), content: r.content }));
  }

  async content(agentId: string, path: string): Promise<Buffer | null> {
    const r = await this.metadata.db.selectFrom('agent_workspace_files').select('content').where('agent_id', '=', agentId).where('path', '=', path).executeTakeFirst();
    return r?.content ?? null;
  }

  /** Removes the rows at `remove` and writes `upsert`, in one transaction, and marks the workspace updated. */
  async change(agentId: string, remove: readonly string[], upsert: readonly Omit<DraftRow, 'size' | 'updatedAt'>[]): Promise<void> {
    const now = nowIso();
    await this.metadata.transaction(async (trx) => {
      for (const path of remove) await trx.deleteFrom('agent_workspace_files').where('agent_id', '=', agentId).where('path', '=', path).execute();
      for (const r of upsert) {
        const row = {
          action: r.action,
          type: r.type,
          content: r.content,
          base_version: r.baseVersion,
          base_node_id: r.baseNodeId,
          base_project_version: r.baseProjectVersion,
          updated_at: now,
        };
        await trx
          .insertInto('agent_workspace_files')
          .values({ agent_id: agentId, path: r.path, ...row })
          .onConflict((oc) => oc.columns(['agent_id', 'path']).doUpdateSet(row))
          .execute();
      }
      await trx.updateTable('agent_workspaces').set({ updated_at: now }).where('agent_id', '=', agentId).execute();
    });
  }
}
