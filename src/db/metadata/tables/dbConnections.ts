/** Database connectors (migration 017): src/data/dbConnectors/. */
export interface DbConnectionsTables {
  db_connections: DbConnectionsTable;
}

/** A project's connection to a PostgreSQL, MySQL/MariaDB or SQLite source; the password only sealed (the row id as AAD). */
export interface DbConnectionsTable {
  id: string;
  project_id: string;
  name: string;
  /** data/dbConnectors/types.ts ENGINES (the CHECK of migration 017). */
  engine: 'postgres' | 'mysql' | 'sqlite';
  host: string | null;
  port: number | null;
  database: string | null;
  user: string | null;
  password_encrypted: string | null;
  /** data/dbConnectors/types.ts SSL_MODES. */
  ssl: 'disable' | 'require' | 'verify-full';
  /** SQLite: the path inside CNS_DB_SQLITE_DIR, as given. */
  file: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
