import { projectsOfOrg } from '../db/metadata/projectRows.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import { oneOf } from '../db/metadata/oneOf.ts';
import type { ToolsTable } from '../db/metadata/tables/tools.ts';
import { DomainError } from '../errors/domainError.ts';
import { newId, nowIso } from '../util/ids.ts';

/** A tool as stored (spec 4.9); `node_id` null means the project's root. */
export interface ToolRecord extends Omit<ToolsTable, 'config'> {
  config: Record<string, unknown>;
}

const fromRow = (r: ToolsTable): ToolRecord => ({ ...r, config: JSON.parse(r.config) as Record<string, unknown> });
const toRow = (r: ToolRecord): ToolsTable => ({ ...r, config: JSON.stringify(r.config) });

/** The `tools` table, on the metadata store. Authorization is the caller's business (routes, callTool). */
export class ToolStore {
  constructor(private readonly metadata: MetadataStore) {}

  async find(id: string): Promise<ToolRecord | null> {
    const r = await this.metadata.db.selectFrom('tools').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /** The tools of these ids that exist, by id (one query however many). */
  async findMany(ids: readonly string[]): Promise<Map<string, ToolRecord>> {
    if (ids.length === 0) return new Map();
    const { db, engine } = this.metadata;
    const rows = await db.selectFrom('tools').selectAll().where((eb) => oneOf(engine, eb.ref('id'), [...new Set(ids)])).execute();
    return new Map(rows.map((r) => [r.id, fromRow(r)]));
  }

  async listByProject(projectId: string): Promise<ToolRecord[]> {
    const rows = await this.metadata.db.selectFrom('tools').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async listByNode(nodeId: string): Promise<ToolRecord[]> {
    const rows = await this.metadata.db.selectFrom('tools').selectAll().where('node_id', '=', nodeId).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async listByOrg(orgId: string): Promise<ToolRecord[]> {
    const rows = await this.metadata.db.selectFrom('tools').selectAll().where('project_id', 'in', projectsOfOrg(this.metadata.db, orgId)).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async create(input: Pick<ToolRecord, 'project_id' | 'node_id' | 'name' | 'description' | 'type' | 'config' | 'created_by'>): Promise<ToolRecord> {
    const now = nowIso();
    const record: ToolRecord = { id: newId('tool'), ...input, created_at: now, updated_at: now };
    await this.metadata.db.insertInto('tools').values(toRow(record)).execute();
    return record;
  }

  /**
   * Writes only the fields `changes` gives (a concurrent change of another field stays) and
   * answers the row as stored (404 when it was deleted meanwhile); `current` is the record the caller checked.
   */
  async update(current: ToolRecord, changes: Partial<Pick<ToolRecord, 'name' | 'description' | 'config'>>): Promise<ToolRecord> {
    const { config, ...rest } = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as typeof changes;
    const row = await this.metadata.db
      .updateTable('tools')
      .set({ ...rest, ...(config === undefined ? {} : { config: JSON.stringify(config) }), updated_at: nowIso() })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new DomainError('NOT_FOUND', 'Tool not found.');
    return fromRow(row);
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('tools').where('id', '=', id).execute();
  }

  /** Projects the search indexer follows. */
  async projectsWithSearch(): Promise<string[]> {
    const rows = await this.metadata.db
      .selectFrom('tools as t')
      .innerJoin('projects as p', 'p.id', 't.project_id')
      .select('t.project_id')
      .distinct()
      .where('t.type', '=', 'search')
      .execute();
    return rows.map((r) => r.project_id);
  }

  async searchToolCount(projectId: string): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('tools')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('type', '=', 'search')
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
