import type { Statement } from 'better-sqlite3';
import type { SecretBox } from '../../auth/secretBox.ts';
import type { Db } from '../../db/database.ts';
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
 * The `mcp_proxy_servers` table. Header values never reach the database in the clear: the
 * whole name → value object is sealed with the row's id as AAD. Authorization is the caller's.
 */
export class ProxyStore {
  private readonly s: Record<string, Statement>;

  constructor(
    db: Db,
    private readonly box: SecretBox,
  ) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      find: p('SELECT * FROM mcp_proxy_servers WHERE id = ?'),
      byName: p('SELECT id FROM mcp_proxy_servers WHERE project_id = ? AND name = ?'),
      byProject: p('SELECT * FROM mcp_proxy_servers WHERE project_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?'),
      count: p('SELECT COUNT(*) AS n FROM mcp_proxy_servers WHERE project_id = ?'),
      insert: p(`INSERT INTO mcp_proxy_servers (id, project_id, name, url, headers_encrypted, created_by, created_at, updated_at)
        VALUES (@id, @project_id, @name, @url, @headers_encrypted, @created_by, @created_at, @updated_at)`),
      update: p('UPDATE mcp_proxy_servers SET name = @name, url = @url, headers_encrypted = @headers_encrypted, updated_at = @updated_at WHERE id = @id'),
      remove: p('DELETE FROM mcp_proxy_servers WHERE id = ?'),
    };
  }

  find(id: string): ProxyServer | null {
    const r = this.s.find.get(id) as Row | undefined;
    return r ? this.fromRow(r) : null;
  }

  /** The id of the project's server with this name, if any. */
  idByName(projectId: string, name: string): string | null {
    return (this.s.byName.get(projectId, name) as { id: string } | undefined)?.id ?? null;
  }

  list(projectId: string, page: { limit: number; offset: number }): { items: ProxyServer[]; total: number } {
    const items = (this.s.byProject.all(projectId, page.limit, page.offset) as Row[]).map((r) => this.fromRow(r));
    return { items, total: (this.s.count.get(projectId) as { n: number }).n };
  }

  create(input: Pick<ProxyServer, 'project_id' | 'name' | 'url' | 'headers' | 'created_by'>): ProxyServer {
    const now = nowIso();
    const record: ProxyServer = { id: newId('mcpx'), ...input, created_at: now, updated_at: now };
    this.s.insert.run(this.toRow(record));
    return record;
  }

  update(id: string, changes: Partial<Pick<ProxyServer, 'name' | 'url' | 'headers'>>): ProxyServer {
    const current = this.find(id)!;
    const next: ProxyServer = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)), updated_at: nowIso() };
    this.s.update.run(this.toRow(next));
    return next;
  }

  delete(id: string): void {
    this.s.remove.run(id);
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
