import type { Principal } from '../../auth/principal.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { ConnectionMode, ConnectionRecord, ConnectionStatus } from '../../domain/connections/connectionRecord.ts';
import type { AccessConnectionStore, IssuedConnection } from '../../domain/connections/accessConnectionStore.ts';
import { NodeBoundConnections } from '../../domain/connections/nodeBound.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { Page, Paged } from '../../domain/pagination.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';
import type { ExecResult, SandboxExecutor } from '../executor.ts';
import { effectiveLimits, endpointLimitsSchema, MAX_COMMAND_BYTES, MAX_STDIN_BYTES, type EndpointLimits } from '../limits.ts';

/** A sandbox endpoint: a connection of kind `sandbox` bound to a folder, with its limits. */
export interface SandboxEndpoint {
  connection: ConnectionRecord;
  nodeId: string;
  limits: Required<EndpointLimits>;
  /** The limits the endpoint was given (the rest are defaults). */
  ownLimits: EndpointLimits;
}

export interface NewSandboxEndpoint {
  projectId: string;
  nodeId: string;
  name: string;
  mode?: ConnectionMode;
  limits?: EndpointLimits;
}

export interface SandboxEndpointChanges {
  name?: string;
  nodeId?: string;
  mode?: ConnectionMode;
  status?: ConnectionStatus;
  limits?: EndpointLimits;
}

export interface ExecInput {
  command: string;
  timeoutS?: number;
  stdin?: string;
}

export interface SandboxEndpointDeps {
  connections: AccessConnectionStore;
  content: ContentStore;
  access: ContentAccess;
  authorizer: Authorizer;
  executor: SandboxExecutor;
}

const notFound = () => new DomainError('NOT_FOUND', 'Sandbox endpoint not found.');

/**
 * Sandbox endpoints (spec 4.9): managing them needs keys:manage on their project, which the
 * surface checks before it calls (each has an access key, scoped to its folder's subtree). A
 * command runs with the endpoint's own key or with the token of a user who may write the
 * project: `exec` decides that itself.
 */
export class SandboxEndpoints {
  /** Records and the folder binding, shared with MCP endpoints. */
  private readonly bound: NodeBoundConnections;

  constructor(private readonly d: SandboxEndpointDeps) {
    this.bound = new NodeBoundConnections(d, 'sandbox', ['a', 'sandbox endpoint']);
  }

  /** An endpoint by id, without any check. */
  find(id: string): SandboxEndpoint | null {
    const connection = this.bound.find(id);
    return connection && toEndpoint(connection);
  }

  list(projectId: string, page: Page): Paged<SandboxEndpoint> {
    const { items, total } = this.bound.list(projectId, page);
    return { items: items.map(toEndpoint), total };
  }

  /** Creates an endpoint on a folder the caller reaches. */
  async create(principal: Principal, input: NewSandboxEndpoint): Promise<{ endpoint: SandboxEndpoint; key: string }> {
    await this.reachFolder(principal, input.nodeId, input.projectId);
    return issued_(this.bound.create(principal, { ...input, config: () => ({ limits: input.limits ?? {} }) }));
  }

  /** The endpoints bound to a node. */
  byNode(nodeId: string): SandboxEndpoint[] {
    return this.bound.byNode(nodeId).map(toEndpoint);
  }

  /** Changes an endpoint; a new folder must be one the caller reaches. */
  async update(principal: Principal, endpoint: SandboxEndpoint, changes: SandboxEndpointChanges): Promise<SandboxEndpoint> {
    if (changes.nodeId !== undefined) await this.reachFolder(principal, changes.nodeId, endpoint.connection.project_id);
    const { limits } = changes;
    const updated = this.bound.update(principal, endpoint.connection, changes, limits === undefined ? undefined : (config) => ({ ...config, limits }));
    return toEndpoint(updated);
  }

  /**
   * The folder check NodeBoundConnections makes (ContentAccess.node), awaited here: the policy is
   * async and src/domain/connections/nodeBound.ts does not await it yet. To go once it does.
   */
  private async reachFolder(principal: Principal, nodeId: string, projectId: string): Promise<void> {
    await this.d.access.node(principal, this.d.content.findById(nodeId), 'content:read', projectId);
  }

  delete(endpoint: SandboxEndpoint): void {
    this.bound.delete(endpoint.connection);
  }

  regenerateKey(endpoint: SandboxEndpoint): { endpoint: SandboxEndpoint; key: string } {
    return issued_(this.bound.regenerateKey(endpoint.connection));
  }

  /**
   * Runs a command over the endpoint's folder. With the endpoint's own key the command acts as
   * the endpoint's agent; with a user's token, as that user (who must be able to write the project).
   */
  async exec(principal: Principal, id: string, input: ExecInput): Promise<ExecResult & { endpoint: SandboxEndpoint }> {
    if (Buffer.byteLength(input.command) > MAX_COMMAND_BYTES) throw invalidField('command', `the command is longer than ${MAX_COMMAND_BYTES} bytes`);
    if (input.command.trim() === '') throw invalidField('command', 'the command is empty');
    if (input.stdin !== undefined && Buffer.byteLength(input.stdin) > MAX_STDIN_BYTES) throw invalidField('stdin', `stdin is longer than ${MAX_STDIN_BYTES} bytes`);
    let connection = this.bound.find(id);
    if (!connection) throw notFound();
    if (principal.kind === 'key' && principal.connection.id !== connection.id) {
      throw new DomainError('FORBIDDEN', "This access key is not this sandbox endpoint's key; run commands with the endpoint's own key or a user token.");
    }
    if (principal.kind === 'user') {
      try {
        await this.d.authorizer.requireProject(principal, connection.project_id, 'content:write');
      } catch (e) {
        if ((e as DomainError).code === 'NOT_FOUND') throw notFound();
        throw e;
      }
    }
    if (connection.status !== 'active') throw new DomainError('CONFLICT', `This sandbox endpoint is ${connection.status}.`, { status: connection.status });
    let endpoint = toEndpoint(connection);
    const timeoutS = input.timeoutS ?? endpoint.limits.timeout_s;
    if (timeoutS > endpoint.limits.timeout_s) throw invalidField('timeout_s', `this endpoint allows at most ${endpoint.limits.timeout_s} seconds`);
    // The key's scope follows its folder when the folder is moved or renamed.
    const followed = this.bound.follow(connection);
    const node = followed.node;
    if (followed.connection !== connection) {
      connection = followed.connection;
      endpoint = toEndpoint(connection);
    }
    const caller: Principal = principal.kind === 'key' ? { ...principal, connection } : principal;
    const mode = connection.mode;
    const grant = await this.d.access.grant(caller, connection.project_id, mode === 'read' ? 'content:read' : 'content:write');
    const result = await this.d.executor.exec({ grant, scope: node.path, mode, command: input.command, stdin: input.stdin, timeoutS, limits: endpoint.limits });
    return { ...result, endpoint };
  }
}

function toEndpoint(connection: ConnectionRecord): SandboxEndpoint {
  const config = JSON.parse(connection.config) as { node_id?: string; limits?: unknown };
  const parsed = endpointLimitsSchema.safeParse(config.limits ?? {});
  const ownLimits = parsed.success ? parsed.data : {};
  return { connection, nodeId: config.node_id ?? '', limits: effectiveLimits(ownLimits), ownLimits };
}

const issued_ = ({ connection, key }: IssuedConnection) => ({ endpoint: toEndpoint(connection), key });
