import type { Principal } from '../auth/principal.ts';
import type { NodeInfo } from '../content/contentStore.ts';
import type { ConnectionMode, ConnectionRecord, ConnectionStatus } from '../domain/connections/connectionRecord.ts';
import type { IssuedConnection } from '../domain/connections/accessConnectionStore.ts';
import { boundNodeId, NodeBoundConnections, type NodeBoundDeps } from '../domain/connections/nodeBound.ts';
import { invalidField } from '../errors/domainError.ts';
import type { Page, Paged } from '../domain/pagination.ts';
import type { ToolRecord } from '../tools/toolStore.ts';
import type { Tools } from '../tools/tools.ts';
import type { AccessEnded } from './sessions.ts';

/** An MCP endpoint (spec 4.9): a connection of kind `mcp` bound to a folder, with the tools it also offers. */
export interface McpEndpoint {
  connection: ConnectionRecord;
  nodeId: string;
  /** Tools of the project bound to the endpoint (offered next to the built-in ones), as stored. */
  toolIds: string[];
}

export interface NewMcpEndpoint {
  projectId: string;
  nodeId: string;
  name: string;
  /** Default read: least privilege, a client writes only through an endpoint made to allow it. */
  mode?: ConnectionMode;
  toolIds?: string[];
}

export interface McpEndpointChanges {
  name?: string;
  nodeId?: string;
  mode?: ConnectionMode;
  status?: ConnectionStatus;
  toolIds?: string[];
}

export function toEndpoint(connection: ConnectionRecord): McpEndpoint {
  const config = JSON.parse(connection.config) as { tool_ids?: unknown };
  const toolIds = Array.isArray(config.tool_ids) ? config.tool_ids.filter((t): t is string => typeof t === 'string') : [];
  return { connection, nodeId: boundNodeId(connection), toolIds };
}

const issued = ({ connection, key }: IssuedConnection) => ({ endpoint: toEndpoint(connection), key });

/**
 * MCP endpoints: managing them needs keys:manage on their project, which the surface checks
 * before it calls; each has its own access key scoped to its folder's subtree. Sessions of an
 * endpoint that is deleted, paused or revoked end at once (`onAccessEnded`), and so do the key's
 * sessions when the key is regenerated.
 */
export class McpEndpoints {
  private readonly bound: NodeBoundConnections;
  onAccessEnded: (event: AccessEnded) => void = () => {};

  constructor(private readonly d: NodeBoundDeps & { tools: Pick<Tools, 'findMany'> }) {
    this.bound = new NodeBoundConnections(d, 'mcp', ['an', 'MCP endpoint']);
  }

  list(projectId: string, page: Page): Paged<McpEndpoint> {
    const { items, total } = this.bound.list(projectId, page);
    return { items: items.map(toEndpoint), total };
  }

  /** Creates an endpoint on a folder the caller reaches, with tools of its project; read-only unless `mode` says read_write. */
  async create(principal: Principal, input: NewMcpEndpoint): Promise<{ endpoint: McpEndpoint; key: string }> {
    // The surface has checked keys:manage on the project before: tools are looked up for a caller who manages it, and checked after the folder.
    const toolIds = input.toolIds ?? [];
    const found = await this.d.tools.findMany(toolIds);
    const config = () => ({ tool_ids: checkTools(input.projectId, toolIds, found) });
    await this.reachFolder(principal, input.nodeId, input.projectId);
    return issued(this.bound.create(principal, { ...input, mode: input.mode ?? 'read', config }));
  }

  /**
   * The folder check NodeBoundConnections makes (ContentAccess.node), awaited here: the policy is
   * async and src/domain/connections/nodeBound.ts does not await it yet. To go once it does.
   */
  private async reachFolder(principal: Principal, nodeId: string, projectId: string): Promise<void> {
    await this.d.access.node(principal, this.d.content.findById(nodeId), 'content:read', projectId);
  }

  /** The endpoints bound to a node. */
  byNode(nodeId: string): McpEndpoint[] {
    return this.bound.byNode(nodeId).map(toEndpoint);
  }

  /** Changes an endpoint; a new folder must be one the caller reaches. */
  async update(principal: Principal, endpoint: McpEndpoint, changes: McpEndpointChanges): Promise<McpEndpoint> {
    const current = endpoint.connection;
    const toolIds = changes.toolIds === undefined ? undefined : checkTools(current.project_id, changes.toolIds, await this.d.tools.findMany(changes.toolIds));
    if (changes.nodeId !== undefined) await this.reachFolder(principal, changes.nodeId, current.project_id);
    const updated = this.bound.update(principal, current, changes, toolIds === undefined ? undefined : (config) => ({ ...config, tool_ids: toolIds }));
    if (updated.status !== 'active') this.onAccessEnded({ serverId: current.id, holders: 'all' });
    return toEndpoint(updated);
  }

  delete(endpoint: McpEndpoint): void {
    this.bound.delete(endpoint.connection);
    this.onAccessEnded({ serverId: endpoint.connection.id, holders: 'all' });
  }

  regenerateKey(endpoint: McpEndpoint): { endpoint: McpEndpoint; key: string } {
    const result = issued(this.bound.regenerateKey(endpoint.connection));
    this.onAccessEnded({ serverId: endpoint.connection.id, holders: 'key' });
    return result;
  }

  /** An endpoint by id whatever its status (the MCP server's gate decides what that means). */
  find(id: string): McpEndpoint | null {
    const connection = this.bound.find(id);
    return connection && toEndpoint(connection);
  }

  /** The endpoint with its folder as it is now; the key's scope follows moves (409 when the folder is gone). */
  follow(endpoint: McpEndpoint): { endpoint: McpEndpoint; path: string; node: NodeInfo } {
    const { connection, node } = this.bound.follow(endpoint.connection);
    return { endpoint: toEndpoint(connection), path: node.path, node };
  }

  /** The bound tools that still exist in the endpoint's project, in the order they were bound. */
  async boundTools(endpoint: McpEndpoint): Promise<ToolRecord[]> {
    const found = await this.d.tools.findMany(endpoint.toolIds);
    return endpoint.toolIds.flatMap((id) => {
      const tool = found.get(id);
      return tool && tool.project_id === endpoint.connection.project_id ? [tool] : [];
    });
  }
}

/** Bound tools must be tools of the endpoint's project (422 naming the entry otherwise); duplicates count once. `found`: the tools of `ids` that exist. */
function checkTools(projectId: string, ids: string[], found: Map<string, ToolRecord>): string[] {
  ids.forEach((id, i) => {
    const tool = found.get(id);
    if (!tool || tool.project_id !== projectId) throw invalidField(`tool_ids.${i}`, `no tool ${id} in this project`);
  });
  return [...new Set(ids)];
}
