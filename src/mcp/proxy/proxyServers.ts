import type { Principal } from '../../auth/principal.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import { checkDestination, isRefusal } from '../../net/outboundGuard.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { ProjectAction } from '../../policies/permissions.ts';
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
 * reaching one (forwarding) needs project:read, or a key of that project. A server another
 * caller cannot see is 404, as if it did not exist. The url passes the outbound guard when it
 * is stored (422 naming `url`), and again at every connection.
 */
export class ProxyServers {
  constructor(
    private readonly d: { store: ProxyStore; authorizer: Authorizer; allowPrivate: () => boolean },
  ) {}

  list(principal: Principal, projectId: string, page: { limit: number; offset: number }) {
    this.d.authorizer.requireProject(principal, projectId, 'keys:manage');
    return this.d.store.list(projectId, page);
  }

  get(principal: Principal, id: string, action: ProjectAction = 'keys:manage'): ProxyServer {
    const server = this.d.store.find(id);
    if (!server) throw notFound();
    try {
      this.d.authorizer.requireProject(principal, server.project_id, action);
    } catch (e) {
      if ((e as DomainError).code === 'NOT_FOUND') throw notFound();
      throw e;
    }
    return server;
  }

  async create(principal: Principal, input: ProxyServerInput): Promise<ProxyServer> {
    this.d.authorizer.requireProject(principal, input.projectId, 'keys:manage');
    const url = await this.checkUrl(input.url);
    this.requireFreeName(input.projectId, input.name);
    const headers = validHeaders(input.headers ?? {});
    return this.d.store.create({ project_id: input.projectId, name: input.name, url, headers, created_by: principal.kind === 'user' ? principal.id : null });
  }

  /** `headers` replaces the stored set whole (values are never shown, so there is nothing to merge with). */
  async update(principal: Principal, id: string, changes: { name?: string; url?: string; headers?: Record<string, string> }): Promise<ProxyServer> {
    const current = this.get(principal, id);
    const url = changes.url === undefined ? undefined : await this.checkUrl(changes.url);
    if (changes.name !== undefined && changes.name !== current.name) this.requireFreeName(current.project_id, changes.name);
    const headers = changes.headers === undefined ? undefined : validHeaders(changes.headers);
    return this.d.store.update(id, { name: changes.name, url, headers });
  }

  delete(principal: Principal, id: string): void {
    this.get(principal, id);
    this.d.store.delete(id);
  }

  private async checkUrl(address: string): Promise<string> {
    try {
      return (await checkDestination(address, this.d.allowPrivate())).toString();
    } catch (e) {
      if (!isRefusal(e)) throw e;
      throw invalidField('url', `The MCP server's url is refused: ${e.message} (only public http(s) addresses, unless the operator sets CNS_URL_FETCH_ALLOW_PRIVATE).`);
    }
  }

  private requireFreeName(projectId: string, name: string): void {
    if (this.d.store.idByName(projectId, name)) throw new DomainError('CONFLICT', `This project already has an MCP proxy server named "${name}".`, { field: 'name' });
  }
}

const notFound = () => new DomainError('NOT_FOUND', 'MCP proxy server not found.');

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
