import { projectsOfOrg } from '../../db/metadata/projectRows.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { JsonTablesTable } from '../../db/metadata/tables/ingest.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A table's record (spec 4.5); its data is the json node `node_id`. */
export interface TableRecord extends Omit<JsonTablesTable, 'json_schema'> {
  /** The JSON Schema every change is validated against; null: none. */
  json_schema: Record<string, unknown> | null;
}

const fromRow = (r: JsonTablesTable): TableRecord => ({ ...r, json_schema: r.json_schema === null ? null : (JSON.parse(r.json_schema) as Record<string, unknown>) });
const toRow = (t: TableRecord): JsonTablesTable => ({ ...t, json_schema: t.json_schema === null ? null : JSON.stringify(t.json_schema) });

/** The `json_tables` records (migration 016), on the metadata store. Authorization is the caller's business (Tables). */
export class TableStore {
  constructor(private readonly metadata: MetadataStore) {}

  async find(id: string): Promise<TableRecord | null> {
    const r = await this.metadata.db.selectFrom('json_tables').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  async listByProject(projectId: string): Promise<TableRecord[]> {
    const rows = await this.metadata.db.selectFrom('json_tables').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async listByOrg(orgId: string): Promise<TableRecord[]> {
    const rows = await this.metadata.db.selectFrom('json_tables').selectAll().where('project_id', 'in', projectsOfOrg(this.metadata.db, orgId)).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async create(input: Pick<TableRecord, 'project_id' | 'node_id' | 'name' | 'description' | 'json_schema' | 'path' | 'created_by'>): Promise<TableRecord> {
    const now = nowIso();
    const record: TableRecord = { id: newId('tbl'), ...input, created_at: now, updated_at: now };
    await this.metadata.db.insertInto('json_tables').values(toRow(record)).execute();
    return record;
  }

  /**
   * Writes only the fields `changes` gives (`json_schema: null` removes the schema; a concurrent
   * change of another field stays) and answers the row as stored; null when it was deleted meanwhile.
   */
  async update(id: string, changes: Partial<Pick<TableRecord, 'name' | 'description' | 'json_schema'>>): Promise<TableRecord | null> {
    const { json_schema, ...rest } = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as typeof changes;
    const row = await this.metadata.db
      .updateTable('json_tables')
      .set({ ...rest, ...(json_schema === undefined ? {} : { json_schema: json_schema === null ? null : JSON.stringify(json_schema) }), updated_at: nowIso() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? fromRow(row) : null;
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('json_tables').where('id', '=', id).execute();
  }
}
