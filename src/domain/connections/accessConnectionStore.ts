import { generateAccessKey } from '../../auth/accessKeys.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { defined } from '../defined.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { ConnectionKind, ConnectionMode, ConnectionRecord, ConnectionStatus } from './connectionRecord.ts';
import { parseScopePath } from './scopePath.ts';

export interface NewConnection {
  projectId: string;
  kind: ConnectionKind;
  name: string;
  /** Raw scope; normalized here (422 when it is not a clean path). Root when omitted. */
  scopePath?: string;
  mode?: ConnectionMode;
  createdBy: string | null;
  /** Kind-specific settings of later features (agent, mcp, sandbox, sync), stored as JSON. */
  config?: Record<string, unknown>;
}

export interface ConnectionChanges {
  name?: string;
  scopePath?: string;
  mode?: ConnectionMode;
  status?: ConnectionStatus;
  /** Replaces the kind-specific settings. */
  config?: Record<string, unknown>;
}

/** A connection and its access key: the key is in plain text only here, to be shown once. */
export interface IssuedConnection {
  connection: ConnectionRecord;
  key: string;
}

/**
 * Connections: the one record behind every access key (api, agent, mcp, sandbox, sync).
 * Keys are stored only as hashes; creating or regenerating returns the key this one time.
 */
export class AccessConnectionStore {
  /** Statements prepared once: `find` runs on every request of a key (MCP sessions, sandbox execs). */
  private readonly sql: (sql: string) => Statement;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  createConnection(input: NewConnection): IssuedConnection {
    const { key, hash, displayPrefix } = generateAccessKey();
    const now = nowIso();
    const connection: ConnectionRecord = {
      id: newId('con'),
      project_id: input.projectId,
      kind: input.kind,
      name: input.name,
      scope_path: parseScopePath(input.scopePath),
      mode: input.mode ?? 'read_write',
      status: 'active',
      key_hash: hash,
      key_prefix: displayPrefix,
      config: JSON.stringify(input.config ?? {}),
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
      last_used_at: null,
    };
    this
      .sql(
        `INSERT INTO connections (id, project_id, kind, name, scope_path, mode, status, key_hash, key_prefix, config, created_by, created_at, updated_at)
         VALUES (@id, @project_id, @kind, @name, @scope_path, @mode, @status, @key_hash, @key_prefix, @config, @created_by, @created_at, @updated_at)`,
      )
      .run(connection);
    return { connection, key };
  }

  /** How many of a project's connections are in each status (for the dashboard). */
  countByStatus(projectId: string): Record<string, number> {
    const rows = this.sql('SELECT status, COUNT(*) AS n FROM connections WHERE project_id = ? GROUP BY status').all(projectId) as {
      status: string;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  find(id: string): ConnectionRecord | undefined {
    return this.sql('SELECT * FROM connections WHERE id = ?').get(id) as ConnectionRecord | undefined;
  }

  listByProject(projectId: string, filter: { kind?: ConnectionKind }, page: Page): Paged<ConnectionRecord> {
    const where = 'WHERE project_id = @projectId AND (@kind IS NULL OR kind = @kind)';
    const params = { projectId, kind: filter.kind ?? null };
    const items = this
      .sql(`SELECT * FROM connections ${where} ORDER BY created_at, id LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: page.limit, offset: page.offset }) as ConnectionRecord[];
    const { n } = this.sql(`SELECT COUNT(*) AS n FROM connections ${where}`).get(params) as { n: number };
    return { items, total: n };
  }

  /** Connections of one kind bound to a node (their config's `node_id`). */
  listByNode(kind: ConnectionKind, nodeId: string): ConnectionRecord[] {
    return this
      .sql(`SELECT * FROM connections WHERE kind = ? AND json_extract(config, '$.node_id') = ? ORDER BY created_at, id`)
      .all(kind, nodeId) as ConnectionRecord[];
  }

  /** Revoked is final: a revoked key stays dead, so reactivating it is refused (create a new connection). */
  update(id: string, changes: ConnectionChanges): ConnectionRecord {
    const current = this.require(id);
    if (current.status === 'revoked' && changes.status && changes.status !== 'revoked') {
      throw new DomainError('CONFLICT', 'A revoked connection cannot be reactivated; create a new one.', { reason: 'revoked' });
    }
    const next: ConnectionRecord = {
      ...current,
      ...defined({ name: changes.name, mode: changes.mode, status: changes.status }),
      scope_path: changes.scopePath === undefined ? current.scope_path : parseScopePath(changes.scopePath),
      config: changes.config === undefined ? current.config : JSON.stringify(changes.config),
      updated_at: nowIso(),
    };
    this
      .sql('UPDATE connections SET name = @name, scope_path = @scope_path, mode = @mode, status = @status, config = @config, updated_at = @updated_at WHERE id = @id')
      .run(next);
    return next;
  }

  delete(id: string): void {
    this.sql('DELETE FROM connections WHERE id = ?').run(id);
  }

  /** Replaces the key hash: the old key stops authenticating with this statement. */
  regenerateKey(id: string): IssuedConnection {
    const current = this.require(id);
    if (current.status === 'revoked') {
      throw new DomainError('CONFLICT', 'A revoked connection cannot get a new key; create a new connection.', { reason: 'revoked' });
    }
    const { key, hash, displayPrefix } = generateAccessKey();
    const connection = { ...current, key_hash: hash, key_prefix: displayPrefix, updated_at: nowIso() };
    this.sql('UPDATE connections SET key_hash = ?, key_prefix = ?, updated_at = ? WHERE id = ?').run(hash, displayPrefix, connection.updated_at, id);
    return { connection, key };
  }

  private require(id: string): ConnectionRecord {
    const c = this.find(id);
    if (!c) throw new DomainError('NOT_FOUND', 'Connection not found.');
    return c;
  }
}
