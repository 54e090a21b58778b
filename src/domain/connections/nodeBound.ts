import type { Principal } from '../../auth/principal.ts';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { ConnectionKind, ConnectionMode, ConnectionRecord, ConnectionStatus } from './connectionRecord.ts';
import { nodeIdOf, type AccessConnectionStore, type IssuedConnection } from './accessConnectionStore.ts';

export interface NodeBoundDeps {
  connections: AccessConnectionStore;
  content: Pick<ContentStore, 'findById'>;
  /** The content door's check of a node a caller hands over (ContentAccess.node, passed in from above: policies sit over domain). */
  access: { node(principal: Principal, node: NodeInfo | null, action: 'content:read' | 'content:write', projectId?: string): unknown };
}

export interface NodeBoundChanges {
  name?: string;
  nodeId?: string;
  mode?: ConnectionMode;
  status?: ConnectionStatus;
}

/** The folder a node-bound connection is bound to ('' when it has none). */
export function boundNodeId(connection: ConnectionRecord): string {
  return connection.node_id ?? '';
}

/**
 * Connections bound to a folder of their project (MCP and sandbox endpoints): the key's scope is
 * the folder's subtree. Managing them needs keys:manage on their project, which the surface
 * checks before it calls (the REST routes declare it); what stays here is the finer part, the
 * folder a caller hands over. Kind-specific settings stay with the caller; this keeps `node_id`
 * in the config.
 */
export class NodeBoundConnections {
  constructor(
    private readonly d: NodeBoundDeps,
    private readonly kind: ConnectionKind,
    /** How errors name one, with its article: `['a', 'sandbox endpoint']`, `['an', 'MCP endpoint']`. */
    private readonly noun: [article: string, noun: string],
  ) {}

  /** A connection of this kind by id, without any check. */
  async find(id: string): Promise<ConnectionRecord | null> {
    const connection = await this.d.connections.find(id);
    return connection && connection.kind === this.kind ? connection : null;
  }

  list(projectId: string, page: Page): Promise<Paged<ConnectionRecord>> {
    return this.d.connections.listByProject(projectId, { kind: this.kind }, page);
  }

  /**
   * Checks the folder (one the caller reaches) and creates the connection scoped to it; `config`
   * gets the folder's `node_id`.
   */
  async create(principal: Principal, input: { projectId: string; nodeId: string; name: string; mode?: ConnectionMode; config: (node: NodeInfo) => Record<string, unknown> }): Promise<IssuedConnection> {
    const node = await this.folder(principal, input.nodeId, input.projectId);
    return this.d.connections.createConnection({
      projectId: input.projectId,
      kind: this.kind,
      name: input.name,
      scopePath: node.path,
      mode: input.mode,
      createdBy: principal.kind === 'user' ? principal.id : null,
      config: { node_id: node.id, ...input.config(node) },
    });
  }

  /** The connections bound to a node. */
  byNode(nodeId: string): Promise<ConnectionRecord[]> {
    return this.d.connections.listByNode(this.kind, nodeId);
  }

  /** Applies changes; a new folder (one the caller reaches) moves the key's scope with it. `config`, when given, computes the new config from the current one. */
  async update(principal: Principal, current: ConnectionRecord, changes: NodeBoundChanges, config?: (current: Record<string, unknown>) => Record<string, unknown>): Promise<ConnectionRecord> {
    const node = changes.nodeId === undefined ? null : await this.folder(principal, changes.nodeId, current.project_id);
    // From the config as stored when written, not as read here: another field's change made meanwhile stays.
    const next =
      node || config ? (stored: Record<string, unknown>) => ({ ...(config ? config(stored) : stored), node_id: node?.id ?? nodeIdOf(stored) ?? '' }) : undefined;
    return this.d.connections.update(current.id, { name: changes.name, mode: changes.mode, status: changes.status, scopePath: node?.path, config: next });
  }

  delete(connection: ConnectionRecord): Promise<void> {
    return this.d.connections.delete(connection.id);
  }

  regenerateKey(connection: ConnectionRecord): Promise<IssuedConnection> {
    return this.d.connections.regenerateKey(connection.id);
  }

  /**
   * The connection's folder as it is now. The key's scope follows the folder when it is moved
   * or renamed (the stored scope is brought up to date); a folder in the trash or deleted is a
   * conflict.
   */
  async follow(connection: ConnectionRecord): Promise<{ connection: ConnectionRecord; node: NodeInfo }> {
    const nodeId = boundNodeId(connection);
    const node = nodeId ? this.d.content.findById(nodeId) : null;
    if (!node || node.state !== 'active' || node.projectId !== connection.project_id) {
      throw new DomainError('CONFLICT', "The endpoint's folder is in the trash or was deleted.", { node_id: nodeId });
    }
    if (node.path !== connection.scope_path) connection = await this.d.connections.update(connection.id, { scopePath: node.path });
    return { connection, node };
  }

  /** The folder a connection is bound to: a node of the project the caller may reach, active, a folder. */
  private async folder(principal: Principal, nodeId: string, projectId: string): Promise<NodeInfo> {
    const node = this.d.content.findById(nodeId);
    await this.d.access.node(principal, node, 'content:read', projectId);
    if (node!.state !== 'active') throw new DomainError('NOT_FOUND', 'Node not found.');
    if (node!.type !== 'folder') throw invalidField('node_id', `${this.noun.join(' ')} is bound to a folder`);
    return node!;
  }
}
