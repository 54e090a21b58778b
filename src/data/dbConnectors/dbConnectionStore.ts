import type { Statement } from 'better-sqlite3';
import type { SecretBox } from '../../auth/secretBox.ts';
import type { Db } from '../../db/database.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { EngineName, SslMode } from './types.ts';

/** A saved database connection. The password is not part of it: `password(record)` opens it when a session needs it. */
export interface DbConnectionRecord {
  id: string;
  project_id: string;
  name: string;
  engine: EngineName;
  host: string | null;
  port: number | null;
  database: string | null;
  user: string | null;
  has_password: boolean;
  ssl: SslMode;
  /** SQLite: the path inside CNS_DB_SQLITE_DIR, as given. */
  file: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

interface Row extends Omit<DbConnectionRecord, 'has_password'> {
  password_encrypted: string | null;
}

export type NewDbConnection = Omit<DbConnectionRecord, 'id' | 'has_password' | 'created_at' | 'updated_at'> & { password: string | null };

/**
 * The `db_connections` table. Passwords never reach the database in the clear: each is sealed
 * with the row's id as AAD. Authorization is the caller's.
 */
export class DbConnectionStore {
  private readonly s: Record<string, Statement>;

  constructor(
    db: Db,
    private readonly box: SecretBox,
  ) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      find: p('SELECT * FROM db_connections WHERE id = ?'),
      byName: p('SELECT id FROM db_connections WHERE project_id = ? AND name = ?'),
      byProject: p('SELECT * FROM db_connections WHERE project_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?'),
      count: p('SELECT COUNT(*) AS n FROM db_connections WHERE project_id = ?'),
      insert: p(`INSERT INTO db_connections (id, project_id, name, engine, host, port, database, user, password_encrypted, ssl, file, created_by, created_at, updated_at)
        VALUES (@id, @project_id, @name, @engine, @host, @port, @database, @user, @password_encrypted, @ssl, @file, @created_by, @created_at, @updated_at)`),
      remove: p('DELETE FROM db_connections WHERE id = ?'),
    };
  }

  find(id: string): DbConnectionRecord | null {
    const r = this.s.find.get(id) as Row | undefined;
    return r ? record(r) : null;
  }

  idByName(projectId: string, name: string): string | null {
    return (this.s.byName.get(projectId, name) as { id: string } | undefined)?.id ?? null;
  }

  list(projectId: string, page: { limit: number; offset: number }): { items: DbConnectionRecord[]; total: number } {
    const items = (this.s.byProject.all(projectId, page.limit, page.offset) as Row[]).map(record);
    return { items, total: (this.s.count.get(projectId) as { n: number }).n };
  }

  create(input: NewDbConnection): DbConnectionRecord {
    const now = nowIso();
    const id = newId('dbc');
    const { password, ...rest } = input;
    const row: Row = { id, ...rest, password_encrypted: password ? this.box.seal(password, id) : null, created_at: now, updated_at: now };
    this.s.insert.run(row);
    return record(row);
  }

  /** The password in the clear, for a session about to connect. */
  password(r: DbConnectionRecord): string | null {
    const row = this.s.find.get(r.id) as Row | undefined;
    return row?.password_encrypted ? this.box.open(row.password_encrypted, r.id).toString('utf8') : null;
  }

  delete(id: string): void {
    this.s.remove.run(id);
  }
}

function record(r: Row): DbConnectionRecord {
  const { password_encrypted, ...rest } = r;
  return { ...rest, has_password: password_encrypted !== null };
}
