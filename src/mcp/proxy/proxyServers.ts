import type { Principal } from '../../auth/principal.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import { checkDestination, isRefusal } from '../../net/outboundGuard.ts';
import type { ProxyServer, ProxyStore } from './proxyStore.ts';

/** Headers the proxy sets itself (MCP's own, hop-by-hop, framing): a stored header may not name them. */
export const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-authorization',
  'proxy-connection', 'expect', 'accept', 'content-type', 'accept-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE = 8192;

export interface ProxyServerInput {
  projectId: string;
  name: string;
  url: string;
  headers?: Record<string, string>;
}

/**
 * The MCP proxy servers of projects (spec 4.9): managing them needs keys:manage on the project;
 * reaching one (forwarding) needs project:read, or a key of that project. The surface checks
 * both before it calls (a server another caller cannot see is 404, as if it did not exist). The
 * url passes the outbound guard when it is stored (422 naming `url`), and again at every connection.
 */
export class ProxyServers {
  constructor(private readonly d: { store: ProxyStore; allowPrivate: () => boolean }) {}

  list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: ProxyServer[]; total: number }> {
    return this.d.store.list(projectId, page);
  }

  /** A server by id, without any check. */
  find(id: string): Promise<ProxyServer | null> {
    return this.d.store.find(id);
  }

  /** Registers a server; `principal` is recorded as who created it. */
  async create(principal: Principal, input: ProxyServerInput): Promise<ProxyServer> {
    const url = await this.checkUrl(input.url);
    await this.requireFreeName(input.projectId, input.name);
    const headers = validHeaders(input.headers ?? {});
    return this.d.store.create({ project_id: input.projectId, name: input.name, url, headers, created_by: principal.kind === 'user' ? principal.id : null });
  }

  /** `headers` replaces the stored set whole (values are never shown, so there is nothing to merge with). */
  async update(current: ProxyServer, changes: { name?: string; url?: string; headers?: Record<string, string> }): Promise<ProxyServer> {
    const url = changes.url === undefined ? undefined : await this.checkUrl(changes.url);
    if (changes.name !== undefined && changes.name !== current.name) await this.requireFreeName(current.project_id, changes.name);
    const headers = changes.headers === undefined ? undefined : validHeaders(changes.headers);
    return this.d.store.update(current, { name: changes.name, url, headers });
  }

  delete(server: ProxyServer): Promise<void> {
    return this.d.store.delete(server.id);
  }

  private async checkUrl(address: string): Promise<string> {
    try {
      return (await checkDestination(address, this.d.allowPrivate())).toString();
    } catch (e) {
      if (!isRefusal(e)) throw e;
      throw invalidField('url', `The MCP server's url is refused: ${e.message} (only public http(s) addresses, unless the operator sets CNS_URL_FETCH_ALLOW_PRIVATE).`);
    }
  }

  private async requireFreeName(projectId: string, name: string): Promise<void> {
    if (await this.d.store.idByName(projectId, name)) throw new DomainError('CONFLICT', `This project already has an MCP proxy server named "${name}".`, { field: 'name' });
  }
}

/** Header names are HTTP tokens (kept lower-case), not ones the proxy sets; values are one line. */
function validHeaders(headers: Record<string, string>): Record<string, string> {
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) throw invalidField('headers', `At most ${MAX_HEADERS} headers.`);
  const out: Record<string, string> = {};
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (!TOKEN.test(name)) throw invalidField(`headers.${rawName}`, 'Not a valid header name.');
    if (RESERVED_HEADERS.has(name)) throw invalidField(`headers.${rawName}`, 'The proxy sets this header itself.');
    if (name in out) throw invalidField(`headers.${rawName}`, 'Given twice (header names ignore case).');
    if (/[\r\n\0]/.test(value) || value.length > MAX_HEADER_VALUE) throw invalidField(`headers.${rawName}`, `The value must be one line of at most ${MAX_HEADER_VALUE} characters.`);
    out[name] = value;
  }
  return out;
}
