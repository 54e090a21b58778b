import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { normalizeTargetPath } from '../../content/paths.ts';
import { DomainError } from '../../errors/domainError.ts';
import { scrub } from '../../logging/redact.ts';
import { isRefusal } from '../../net/outboundGuard.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import type { DbConnectionRecord, DbConnectionStore } from './dbConnectionStore.ts';
import type { Preview } from './engine.ts';
import { DEFAULT_PORTS, engineFor, type ConnectionSpec, type ConnectorSettings } from './engines.ts';
import { DbConnectorError, SessionFailure, dbInvalid } from './errors.ts';
import { FormattedOutput } from './formattedOutput.ts';
import { checkDatabaseHost } from './guardedSocket.ts';
import type { SaveFormat } from './rowFormats.ts';
import { sqliteFileIn } from './sqliteFiles.ts';
import type { EngineName, SslMode, TableList } from './types.ts';

export interface NewConnectionInput {
  projectId: string;
  name: string;
  engine: EngineName;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string;
  ssl?: SslMode;
  file?: string;
}

export interface SaveInput {
  table?: string;
  query?: string;
  path: string;
  format: SaveFormat;
  limit?: number;
}

export interface SaveResult {
  node: NodeInfo;
  rows: number;
  truncated: boolean;
  bytes: number;
}

/**
 * Database connectors (spec 4.10): connections of a project to PostgreSQL, MySQL/MariaDB and
 * SQLite, their tables, previews, and results saved as content nodes. Managing connections
 * needs keys:manage; reading tables content:read; saving content:write with the target path
 * in the caller's scope. The routes check the project (a connection another caller cannot see
 * is 404); the target path of a save is checked here. The connection is tested before it is
 * saved; every session is read-only with a statement timeout and a row cap.
 */
export class DbConnectors {
  constructor(
    private readonly d: {
      store: DbConnectionStore;
      access: Pick<ContentAccess, 'requirePath'>;
      content: ContentStore;
      /** Read at each use, so a changed setting applies to saved connections too. */
      settings: () => ConnectorSettings;
      connectTimeoutMs?: number;
    },
  ) {}

  list(projectId: string, page: { limit: number; offset: number }) {
    return this.d.store.list(projectId, page);
  }

  /** The record by id, whoever asks (a route's check is made on its project). */
  find(id: string): Promise<DbConnectionRecord | null> {
    return this.d.store.find(id);
  }

  /** `createdBy`: the user who creates it (null for a key). */
  async create(input: NewConnectionInput, createdBy: string | null): Promise<DbConnectionRecord> {
    await this.requireFreeName(input.projectId, input.name);
    const spec = this.specOf(input);
    if (spec.engine === 'sqlite') sqliteFileIn(this.d.settings().sqliteDir ?? undefined, spec.file);
    else {
      try {
        await checkDatabaseHost(spec.host!, this.d.settings().allowLoopback);
      } catch (e) {
        if (isRefusal(e)) throw dbInvalid('host', `The host is refused: ${e.message}.`);
        throw e;
      }
    }
    try {
      await this.engine(spec).test();
    } catch (e) {
      if (!(e instanceof SessionFailure)) throw e;
      throw dbInvalid(e.field ?? (spec.engine === 'sqlite' ? 'file' : 'host'), `The connection was tested before saving and failed: ${e.message}`);
    }
    // The test took time: another request may have taken the name meanwhile.
    await this.requireFreeName(input.projectId, input.name);
    return this.d.store.create({
      project_id: input.projectId,
      name: input.name,
      engine: spec.engine,
      host: spec.host,
      port: spec.port,
      database: spec.database,
      user: spec.user,
      password: spec.password,
      ssl: spec.ssl,
      file: spec.file,
      created_by: createdBy,
    });
  }

  async delete(c: DbConnectionRecord): Promise<void> {
    await this.d.store.delete(c.id);
  }

  async tables(c: DbConnectionRecord): Promise<{ connection: DbConnectionRecord } & TableList> {
    const list = await this.run(c, 'connection', (e) => e.listTables());
    return { connection: c, ...list };
  }

  async preview(c: DbConnectionRecord, table: string, limit: number): Promise<Preview> {
    return this.run(c, 'table', (e) => e.preview(table, limit));
  }

  /**
   * Streams a table's first rows or a query's rows into the chosen format in a temporary file
   * (never past the largest node), then writes ONE node through the content store as the
   * caller: csv as a file node streamed from the temporary file; json and markdown as json and
   * markdown nodes, which the store takes as a value (bounded by the same limit). `grant` is
   * content:write on the connection's project; the target path must lie in its scope.
   */
  async save(grant: ContentGrant, c: DbConnectionRecord, input: SaveInput): Promise<SaveResult> {
    if (grant.projectId !== c.project_id) throw new DomainError('NOT_FOUND', 'Database connection not found.');
    const path = normalizeTargetPath(input.path, 'path');
    this.d.access.requirePath(grant, path);
    const maxRows = this.d.settings().maxRows;
    if (input.limit !== undefined && input.limit > maxRows) throw dbInvalid('limit', `limit may be at most ${maxRows} (CNS_DB_MAX_ROWS).`);
    const limit = input.limit ?? maxRows;
    const dir = await mkdtemp(join(tmpdir(), 'cns-db-save-'));
    const out = new FormattedOutput(input.format, join(dir, `rows.${input.format}`), this.d.content.maxContentBytes);
    let closed = false;
    try {
      const outcome = await this.run(c, input.table !== undefined ? 'table' : 'query', (e) =>
        input.table !== undefined ? e.readTable(input.table, limit, out) : e.query(input.query!, limit, out),
      );
      const { bytes, rows } = out.finish();
      out.close();
      closed = true;
      const what = input.table !== undefined ? `table ${input.table}` : 'a query';
      const message = `Save ${rows} rows of ${what} from database connection "${c.name}" as ${input.format}`;
      const node = await this.writeNode(c.project_id, grant.actor, path, input.format, out.file, bytes, message);
      return { node, rows, truncated: outcome.truncated, bytes };
    } finally {
      if (!closed) out.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async writeNode(projectId: string, actor: Parameters<ContentStore['write']>[1], path: string, format: SaveFormat, file: string, bytes: number, message: string): Promise<NodeInfo> {
    const store = this.d.content;
    if (format === 'csv') {
      const blobId = await store.writeBlobStream(projectId, createReadStream(file), bytes);
      const r = await store.commit(projectId, actor, [{ op: 'writeBlob', path, blobId, size: bytes }], { message });
      return r.nodes.find((n) => n.path === path) ?? store.getByPath(projectId, path);
    }
    const text = await readFile(file, 'utf8');
    const content = format === 'json' ? (JSON.parse(text) as unknown) : text;
    return (await store.write(projectId, actor, { path, type: format, content, message })).node;
  }

  /** Runs work on the connection's engine, turning a session failure into the caller's answer. */
  private async run<T>(c: DbConnectionRecord, field: string, work: (e: ReturnType<typeof engineFor>) => Promise<T>): Promise<T> {
    const spec: ConnectionSpec = { ...c, password: c.has_password ? await this.d.store.password(c) : null };
    try {
      return await work(this.engine(spec));
    } catch (e) {
      if (!(e instanceof SessionFailure)) throw e;
      const message = scrub(e.message, spec.password);
      switch (e.kind) {
        case 'network':
        case 'auth':
          throw new DbConnectorError('UPSTREAM_ERROR', `The database of connection "${c.name}" is not available: ${message}`);
        case 'refused':
          throw dbInvalid('host', `${message} Database connections may not reach this address now.`);
        default:
          throw dbInvalid(field, message);
      }
    }
  }

  private engine(spec: ConnectionSpec) {
    return engineFor(spec, this.d.settings(), this.d.connectTimeoutMs);
  }

  /** The fields the engine uses; the ones of the other kind of engine are refused rather than ignored. */
  private specOf(input: NewConnectionInput): ConnectionSpec {
    if (input.engine === 'sqlite') {
      for (const field of ['host', 'port', 'database', 'user', 'password', 'ssl'] as const) {
        if (input[field] !== undefined) throw dbInvalid(field, `An SQLite connection reads a file: ${field} does not apply (give only file).`);
      }
      return { engine: 'sqlite', host: null, port: null, database: null, user: null, password: null, ssl: 'disable', file: input.file ?? null };
    }
    if (input.file !== undefined) throw dbInvalid('file', `A ${input.engine} connection reaches a server: file applies to SQLite only.`);
    for (const field of ['host', 'database', 'user'] as const) {
      if (!input[field]) throw dbInvalid(field, `A ${input.engine} connection needs ${field}.`);
    }
    return {
      engine: input.engine,
      host: input.host!.replace(/^\[(.*)\]$/, '$1'),
      port: input.port ?? DEFAULT_PORTS[input.engine],
      database: input.database!,
      user: input.user!,
      password: input.password ? input.password : null,
      ssl: input.ssl ?? 'disable',
      file: null,
    };
  }

  private async requireFreeName(projectId: string, name: string): Promise<void> {
    if (await this.d.store.idByName(projectId, name)) throw new DomainError('CONFLICT', `This project already has a database connection named "${name}".`, { field: 'name' });
  }
}
