import { generateAccessKey } from '../../auth/accessKeys.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
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
  /**
   * Replaces the kind-specific settings; a function computes them from the config as stored, and
   * is called again should another write change it meanwhile (no change to it is lost).
   */
  config?: Record<string, unknown> | ((current: Record<string, unknown>) => Record<string, unknown>);
}

/** A connection and its access key: the key is in plain text only here, to be shown once. */
export interface IssuedConnection {
  connection: ConnectionRecord;
  key: string;
}

/** The folder of a node-bound connection, kept in a column of its own beside the config's copy. */
export function nodeIdOf(config: Record<string, unknown> | undefined): string | null {
  return typeof config?.node_id === 'string' && config.node_id !== '' ? config.node_id : null;
}

/**
 * Connections: the one record behind every access key (api, agent, mcp, sandbox, sync).
 * Keys are stored only as hashes; creating or regenerating returns the key this one time.
 */
export class AccessConnectionStore {
  constructor(private readonly metadata: MetadataStore) {}

  /** Creates the connection, within the caller's transaction when `trx` is given. */
  async createConnection(input: NewConnection, trx: MetadataDb = this.metadata.db): Promise<IssuedConnection> {
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
      node_id: nodeIdOf(input.config),
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
      last_used_at: null,
    };
    await trx.insertInto('connections').values(connection).execute();
    return { connection, key };
  }

  /** How many of a project's connections are in each status (for the dashboard). */
  async countByStatus(projectId: string): Promise<Record<string, number>> {
    const rows = await this.metadata.db
      .selectFrom('connections')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /** The status and scope of each of a project's connections (counted within a scope by the caller). */
  statusesAndScopes(projectId: string): Promise<{ status: ConnectionStatus; scope_path: string }[]> {
    return this.metadata.db.selectFrom('connections').select(['status', 'scope_path']).where('project_id', '=', projectId).execute();
  }

  find(id: string, db: MetadataDb = this.metadata.db): Promise<ConnectionRecord | undefined> {
    return db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async listByProject(projectId: string, filter: { kind?: ConnectionKind }, page: Page): Promise<Paged<ConnectionRecord>> {
    const of = this.metadata.db
      .selectFrom('connections')
      .where('project_id', '=', projectId)
      .$if(filter.kind !== undefined, (qb) => qb.where('kind', '=', filter.kind!));
    const items = await of.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute();
    const { n } = await of.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { items, total: Number(n) };
  }

  /** Connections of one kind bound to a node. */
  listByNode(kind: ConnectionKind, nodeId: string): Promise<ConnectionRecord[]> {
    return this.metadata.db.selectFrom('connections').selectAll().where('kind', '=', kind).where('node_id', '=', nodeId).orderBy('created_at').orderBy('id').execute();
  }

  /** Revoked is final: a revoked key stays dead, so reactivating it is refused (create a new connection). */
  async update(id: string, changes: ConnectionChanges): Promise<ConnectionRecord> {
    const current = await this.require(id);
    if (current.status === 'revoked' && changes.status && changes.status !== 'revoked') {
      throw new DomainError('CONFLICT', 'A revoked connection cannot be reactivated; create a new one.', { reason: 'revoked' });
    }
    const config = typeof changes.config === 'function' ? changes.config(JSON.parse(current.config) as Record<string, unknown>) : changes.config;
    // Only the columns this change names are written, so two updates at once of different
    // columns both stay (writing the whole row read above would lose the other's).
    const set = {
      ...defined({ name: changes.name, mode: changes.mode, status: changes.status }),
      ...(changes.scopePath === undefined ? {} : { scope_path: parseScopePath(changes.scopePath) }),
      ...(config === undefined ? {} : { config: JSON.stringify(config), node_id: nodeIdOf(config) }),
      updated_at: nowIso(),
    };
    // A revocation made meanwhile stays: the update applies only to a connection not revoked since it was read.
    // A config computed from the one read applies only if that is still the one stored (else it is computed again).
    const updated = await this.metadata.db
      .updateTable('connections')
      .set(set)
      .where('id', '=', id)
      .$if(current.status !== 'revoked', (qb) => qb.where('status', '!=', 'revoked'))
      .$if(typeof changes.config === 'function', (qb) => qb.where('config', '=', current.config))
      .returningAll()
      .executeTakeFirst();
    return updated ?? this.update(id, changes);
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('connections').where('id', '=', id).execute();
  }

  /** Replaces the key hash: the old key stops authenticating with this statement. */
  async regenerateKey(id: string): Promise<IssuedConnection> {
    const current = await this.require(id);
    if (current.status === 'revoked') {
      throw new DomainError('CONFLICT', 'A revoked connection cannot get a new key; create a new connection.', { reason: 'revoked' });
    }
    const { key, hash, displayPrefix } = generateAccessKey();
    const connection = { ...current, key_hash: hash, key_prefix: displayPrefix, updated_at: nowIso() };
    const updated = await this.metadata.db
      .updateTable('connections')
      .set({ key_hash: hash, key_prefix: displayPrefix, updated_at: connection.updated_at })
      .where('id', '=', id)
      .where('status', '!=', 'revoked')
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return this.regenerateKey(id);
    return { connection, key };
  }

  private async require(id: string): Promise<ConnectionRecord> {
    const c = await this.find(id);
    if (!c) throw new DomainError('NOT_FOUND', 'Connection not found.');
    return c;
  }
}
