import type Database from 'better-sqlite3';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import pg from 'pg';
import { DbFreshness } from '../freshness.ts';

/**
 * Whether metadata rows this process read earlier may still be used (metadataCache.ts), on either
 * engine. `generation()` changes whenever cached records may have changed since it was last asked,
 * and is null when nothing may be kept at all.
 */
export interface MetadataChanges {
  generation(): number | null;
  close(): Promise<void>;
}

/** SQLite: `total_changes()` for this connection's writes, `PRAGMA data_version` for everyone else's (freshness.ts). */
export function sqliteChanges(raw: Database.Database): MetadataChanges {
  const freshness = DbFreshness.of(raw);
  return { generation: () => freshness.generation(), close: async () => {} };
}

/** The channel the triggers of the PostgreSQL schema notify on (`cns_metadata_changed()`), one notification per statement and table. */
export const CHANGES_CHANNEL = 'cns_metadata_changed';

/**
 * The tables whose rows are cached (a user, a key, a project and role): a write to one of them,
 * by any process, empties every cache. Their PostgreSQL triggers are in the migrations.
 */
export const CACHED_TABLES: ReadonlySet<string> = new Set(['users', 'refresh_tokens', 'organizations', 'org_members', 'projects', 'project_members', 'connections']);

/**
 * PostgreSQL has neither `data_version` nor a change counter that a client reads for free, so
 * other processes' commits are learnt by LISTEN on a connection of its own (the triggers NOTIFY
 * at commit), and this process's own writes to the cached tables by the query builder's plugin
 * (changesPlugin), at once, before the notification comes back. While that connection is down,
 * a notification could be missed: nothing is cached until it is up again, and coming up counts as
 * a change. So a cached row is at most one notification's delay old (a millisecond or so on a
 * LAN), and never older than the last time the listener was sure.
 */
export class PostgresChanges implements MetadataChanges {
  private gen = 0;
  private listening = false;
  private client: pg.Client | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = RETRY_MIN_MS;
  private closed = false;
  /** Writes this process made to cached tables (the plugin's count); a transaction compares it before and after. */
  writes = 0;

  constructor(private readonly connection: pg.ClientConfig) {}

  generation(): number | null {
    return this.listening ? this.gen : null;
  }

  /** This process changed a cached table. */
  changed(): void {
    this.writes++;
    this.gen++;
  }

  /** Starts listening; answers once the first LISTEN is in place (or has failed: then it retries in the background). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ ...this.connection, application_name: 'cns-changes' });
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.gen++;
      client.end().catch(() => undefined);
      this.retry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', () => {
      this.gen++;
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch {
      lost();
      return;
    }
    if (this.client !== client) return;
    // Anything may have changed while no one listened.
    this.gen++;
    this.listening = true;
    this.retryMs = RETRY_MIN_MS;
  }

  private retry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * Counts this process's writes to the cached tables as they complete (insert, update, delete,
 * merge through the query builder; a raw `sql` write to those tables must call `changed()` itself).
 */
export function changesPlugin(changes: Pick<PostgresChanges, 'changed'>, tables: ReadonlySet<string> = CACHED_TABLES): KyselyPlugin {
  const writes = new WeakSet<object>();
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (writesTo(args.node, tables)) writes.add(args.queryId);
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (writes.has(args.queryId)) changes.changed();
      return args.result;
    },
  };
}

/** The table a write query changes, from its operation node. */
function writesTo(node: RootOperationNode, tables: ReadonlySet<string>): boolean {
  const named = (n: unknown): string | undefined => {
    const t = n as { kind?: string; table?: { identifier?: { name?: string } }; node?: unknown } | undefined;
    if (t?.kind === 'TableNode') return t.table?.identifier?.name;
    if (t?.kind === 'AliasNode') return named(t.node);
    return undefined;
  };
  switch (node.kind) {
    case 'InsertQueryNode':
      return tables.has(named(node.into) ?? '');
    case 'UpdateQueryNode':
      return tables.has(named(node.table) ?? '');
    case 'DeleteQueryNode':
      return node.from.froms.some((f) => tables.has(named(f) ?? ''));
    case 'MergeQueryNode':
      return tables.has(named(node.into) ?? '');
    default:
      return false;
  }
}
