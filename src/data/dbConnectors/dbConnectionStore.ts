import type { SecretBox } from '../../auth/secretBox.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { idByName, pageOfProject } from '../../db/metadata/projectRows.ts';
import type { DbConnectionsTable } from '../../db/metadata/tables/dbConnections.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A saved database connection. The password is not part of it: `password(record)` opens it when a session needs it. */
export type DbConnectionRecord = Omit<DbConnectionsTable, 'password_encrypted'> & { has_password: boolean };

type Row = DbConnectionsTable;

export type NewDbConnection = Omit<DbConnectionRecord, 'id' | 'has_password' | 'created_at' | 'updated_at'> & { password: string | null };

/**
 * The `db_connections` table, on the metadata store. Passwords never reach the database in the
 * clear: each is sealed with the row's id as AAD. Authorization is the caller's.
 */
export class DbConnectionStore {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly box: SecretBox,
  ) {}

  async find(id: string): Promise<DbConnectionRecord | null> {
    const r = await this.row(id);
    return r ? record(r) : null;
  }

  idByName(projectId: string, name: string): Promise<string | null> {
    return idByName(this.metadata.db, 'db_connections', projectId, name);
  }

  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: DbConnectionRecord[]; total: number }> {
    const { rows, total } = await pageOfProject(this.metadata.db, 'db_connections', projectId, page);
    return { items: rows.map(record), total };
  }

  async create(input: NewDbConnection): Promise<DbConnectionRecord> {
    const now = nowIso();
    const id = newId('dbc');
    const { password, ...rest } = input;
    const row: Row = { id, ...rest, password_encrypted: password ? this.box.seal(password, id) : null, created_at: now, updated_at: now };
    await this.metadata.db.insertInto('db_connections').values(row).execute();
    return record(row);
  }

  /** The password in the clear, for a session about to connect. */
  async password(r: DbConnectionRecord): Promise<string | null> {
    const row = await this.row(r.id);
    return row?.password_encrypted ? this.box.open(row.password_encrypted, r.id).toString('utf8') : null;
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('db_connections').where('id', '=', id).execute();
  }

  private row(id: string): Promise<Row | undefined> {
    return this.metadata.db.selectFrom('db_connections').selectAll().where('id', '=', id).executeTakeFirst();
  }
}

function record(r: Row): DbConnectionRecord {
  const { password_encrypted, ...rest } = r;
  return { ...rest, has_password: password_encrypted !== null };
}
