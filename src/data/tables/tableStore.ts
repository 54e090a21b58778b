import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/database.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A table's record (spec 4.5); its data is the json node `node_id`. */
export interface TableRecord {
  id: string;
  project_id: string;
  node_id: string;
  name: string;
  description: string;
  /** The JSON Schema every change is validated against; null: none. */
  json_schema: Record<string, unknown> | null;
  /** Where the node was created (the node's current path is the content store's). */
  path: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

type Row = Omit<TableRecord, 'json_schema'> & { json_schema: string | null };

const fromRow = (r: Row): TableRecord => ({ ...r, json_schema: r.json_schema === null ? null : (JSON.parse(r.json_schema) as Record<string, unknown>) });

/** The `json_tables` records (migration 016). Authorization is the caller's business (Tables). */
export class TableStore {
  private readonly s: Record<string, Statement>;

  constructor(db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      find: p('SELECT * FROM json_tables WHERE id = ?'),
      byProject: p('SELECT * FROM json_tables WHERE project_id = ? ORDER BY created_at, id'),
      byOrg: p('SELECT t.* FROM json_tables t JOIN projects p ON p.id = t.project_id WHERE p.org_id = ? ORDER BY t.created_at, t.id'),
      insert: p(`INSERT INTO json_tables (id, project_id, node_id, name, description, json_schema, path, created_by, created_at, updated_at)
        VALUES (@id, @project_id, @node_id, @name, @description, @json_schema, @path, @created_by, @created_at, @updated_at)`),
      update: p('UPDATE json_tables SET name = @name, description = @description, json_schema = @json_schema, updated_at = @updated_at WHERE id = @id'),
      remove: p('DELETE FROM json_tables WHERE id = ?'),
    };
  }

  find(id: string): TableRecord | null {
    const r = this.s.find.get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  listByProject(projectId: string): TableRecord[] {
    return (this.s.byProject.all(projectId) as Row[]).map(fromRow);
  }

  listByOrg(orgId: string): TableRecord[] {
    return (this.s.byOrg.all(orgId) as Row[]).map(fromRow);
  }

  create(input: Pick<TableRecord, 'project_id' | 'node_id' | 'name' | 'description' | 'json_schema' | 'path' | 'created_by'>): TableRecord {
    const now = nowIso();
    const record: TableRecord = { id: newId('tbl'), ...input, created_at: now, updated_at: now };
    this.s.insert.run(toRow(record));
    return record;
  }

  /** `json_schema: null` removes the schema; undefined fields stay as they are. */
  update(id: string, changes: Partial<Pick<TableRecord, 'name' | 'description' | 'json_schema'>>): TableRecord {
    const current = this.find(id)!;
    const next: TableRecord = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)), updated_at: nowIso() };
    this.s.update.run(toRow(next));
    return next;
  }

  delete(id: string): void {
    this.s.remove.run(id);
  }
}

const toRow = (t: TableRecord): Row => ({ ...t, json_schema: t.json_schema === null ? null : JSON.stringify(t.json_schema) });
