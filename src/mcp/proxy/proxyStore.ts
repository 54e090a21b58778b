import type { SecretBox } from '../../auth/secretBox.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { idByName, pageOfProject } from '../../db/metadata/projectRows.ts';
import { DomainError } from '../../errors/domainError.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A registered external MCP server; `headers` hold the plaintext values, for forwarding only. */
export interface ProxyServer {
  id: string;
  project_id: string;
  name: string;
  url: string;
  headers: Record<string, string>;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

interface Row extends Omit<ProxyServer, 'headers'> {
  headers_encrypted: string | null;
}

/**
 * The `mcp_proxy_servers` table, on the metadata store. Header values never reach the database in
 * the clear: the whole name → value object is sealed with the row's id as AAD. Authorization is
 * the caller's.
 */
export class ProxyStore {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly box: SecretBox,
  ) {}

  async find(id: string): Promise<ProxyServer | null> {
    const r = await this.metadata.db.selectFrom('mcp_proxy_servers').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? this.fromRow(r) : null;
  }

  /** The id of the project's server with this name, if any. */
  idByName(projectId: string, name: string): Promise<string | null> {
    return idByName(this.metadata.db, 'mcp_proxy_servers', projectId, name);
  }

  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: ProxyServer[]; total: number }> {
    const { rows, total } = await pageOfProject(this.metadata.db, 'mcp_proxy_servers', projectId, page);
    return { items: rows.map((r) => this.fromRow(r)), total };
  }

  async create(input: Pick<ProxyServer, 'project_id' | 'name' | 'url' | 'headers' | 'created_by'>): Promise<ProxyServer> {
    const now = nowIso();
    const record: ProxyServer = { id: newId('mcpx'), ...input, created_at: now, updated_at: now };
    await this.metadata.db.insertInto('mcp_proxy_servers').values(this.toRow(record)).execute();
    return record;
  }

  /**
   * Writes only the fields `changes` gives (a concurrent change of another field stays) and
   * answers the row as stored (404 when it was deleted meanwhile); `current` is the record the caller checked.
   */
  async update(current: ProxyServer, changes: Partial<Pick<ProxyServer, 'name' | 'url' | 'headers'>>): Promise<ProxyServer> {
    const { headers, ...rest } = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as typeof changes;
    const sealed = headers === undefined ? {} : { headers_encrypted: this.toRow({ ...current, headers }).headers_encrypted };
    const row = await this.metadata.db
      .updateTable('mcp_proxy_servers')
      .set({ ...rest, ...sealed, updated_at: nowIso() })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new DomainError('NOT_FOUND', 'MCP proxy server not found.');
    return this.fromRow(row);
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('mcp_proxy_servers').where('id', '=', id).execute();
  }

  private toRow(r: ProxyServer): Row {
    const { headers, ...rest } = r;
    return { ...rest, headers_encrypted: Object.keys(headers).length ? this.box.seal(JSON.stringify(headers), r.id) : null };
  }

  private fromRow(r: Row): ProxyServer {
    const { headers_encrypted, ...rest } = r;
    const headers = headers_encrypted ? (JSON.parse(this.box.open(headers_encrypted, r.id).toString('utf8')) as Record<string, string>) : {};
    return { ...rest, headers };
  }
}
