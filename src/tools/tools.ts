import type { Principal } from '../auth/principal.ts';
import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import { joinPath, normalizePath } from '../content/paths.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAction } from '../policies/contentAccess.ts';
import { pathInScope } from '../policies/scope.ts';
import { toolTypes } from './registry.ts';
import type { IndexState } from '../search/indexer.ts';
import type { ToolContent, ToolEnv, ToolInvocation, ToolSandbox } from './toolType.ts';
import type { ToolRecord, ToolStore } from './toolStore.ts';

export interface ToolsDeps extends ToolEnv {
  content: ContentStore;
  store: ToolStore;
  authorizer: Authorizer;
}

export interface NewTool {
  projectId?: string;
  nodeId?: string | null;
  name: string;
  description?: string;
  type: string;
  config?: unknown;
}

/**
 * The tools library: tool records, their validation and `callTool`, which any surface (REST
 * now; MCP, agents and sandboxes later) calls with a principal. A tool never reaches outside
 * its node's subtree, and the caller's own rights still apply: both are checked on every call.
 */
export class Tools {
  constructor(private readonly d: ToolsDeps) {}

  /**
   * Starts the indexer on every project that has a search tool (after a restart it catches up);
   * `here`: only projects whose index this process keeps (several workers: those it owns).
   */
  async start(here: (projectId: string) => boolean = () => true): Promise<void> {
    for (const projectId of await this.d.store.projectsWithSearch()) if (here(projectId)) this.d.indexer.enable(projectId);
  }

  /** This process now keeps the project's index (it took the project over): it catches up if it has a search tool. */
  async adopted(projectId: string): Promise<void> {
    if ((await this.d.store.searchToolCount(projectId)) > 0) this.d.indexer.enable(projectId);
  }

  find(id: string): Promise<ToolRecord | null> {
    return this.d.store.find(id);
  }

  /** The tools of these ids that exist, by id, without any check. */
  findMany(ids: readonly string[]): Promise<Map<string, ToolRecord>> {
    return this.d.store.findMany(ids);
  }

  /** A tool the principal may see (its project readable): otherwise "not found" (a tool named in a request, as when binding one to an agent). */
  async visible(principal: Principal, id: string): Promise<ToolRecord> {
    const tool = await this.d.store.find(id);
    if (!tool) throw new DomainError('NOT_FOUND', 'Tool not found.');
    try {
      await this.d.authorizer.requireProject(principal, tool.project_id, 'project:read');
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') throw new DomainError('NOT_FOUND', 'Tool not found.');
      throw err;
    }
    return tool;
  }

  /** A project's tools for a principal who may read the project (the MCP endpoint's tools ask; REST routes check first and call `listByProject`). */
  async listForProject(principal: Principal, projectId: string): Promise<ToolRecord[]> {
    await this.d.authorizer.requireProject(principal, projectId, 'project:read');
    return this.listByProject(projectId);
  }

  /** A project's tools, without any check. */
  listByProject(projectId: string): Promise<ToolRecord[]> {
    return this.d.store.listByProject(projectId);
  }

  async listForOrg(principal: Principal, orgId: string): Promise<ToolRecord[]> {
    if (principal.kind === 'key') return (await this.d.store.listByOrg(orgId)).filter((t) => t.project_id === principal.connection.project_id);
    await this.d.authorizer.requireOrg(principal, orgId, 'org:read');
    const readable = new Map<string, boolean>();
    const out: ToolRecord[] = [];
    for (const t of await this.d.store.listByOrg(orgId)) {
      if (!readable.has(t.project_id)) {
        try {
          await this.d.authorizer.requireProject(principal, t.project_id, 'project:read');
          readable.set(t.project_id, true);
        } catch {
          readable.set(t.project_id, false);
        }
      }
      if (readable.get(t.project_id)) out.push(t);
    }
    return out;
  }

  /** The tools bound to a node, without any check. */
  listByNode(nodeId: string): Promise<ToolRecord[]> {
    return this.d.store.listByNode(nodeId);
  }

  /** Creates a tool on a node the caller may write beneath (or on a project root); a search tool starts its index. */
  async create(principal: Principal, input: NewTool): Promise<ToolRecord> {
    const type = toolTypes.get(input.type);
    if (!type) throw invalidField('type', `unknown tool type "${input.type}"; one of ${[...toolTypes.keys()].join(', ')}`);
    const config = parseConfig(input.type, input.config ?? {});
    let projectId: string;
    let node: NodeInfo | null = null;
    if (input.nodeId) {
      node = this.d.content.findById(input.nodeId);
      // Unknown nodes, nodes the caller cannot see and nodes of another project than the one named: 404.
      await this.d.access.node(principal, node, 'content:read', input.projectId);
      node = node!;
      if (node.state !== 'active') throw new DomainError('NOT_FOUND', 'Node not found.');
      if (type.binds === 'folder' && node.type !== 'folder') throw invalidField('node_id', `a ${type.type} tool is bound to a folder`);
      projectId = node.projectId;
    } else if (input.projectId) {
      projectId = input.projectId;
      const g = await this.d.access.grant(principal, projectId, 'content:read');
      this.d.access.requireWholeProject(g, 'A tool on the whole project');
    } else throw invalidField('node_id', 'node_id (or project_id for the whole project) is required');
    await this.d.authorizer.requireProject(principal, projectId, 'content:write');
    const tool = await this.d.store.create({
      project_id: projectId,
      node_id: node?.id ?? null,
      name: input.name,
      description: input.description ?? '',
      type: input.type,
      config: config as Record<string, unknown>,
      created_by: principal.id,
    });
    if (tool.type === 'search') this.d.indexer.enable(projectId);
    return tool;
  }

  /** Changes a tool (the surface checked content:write on its project). */
  async update(tool: ToolRecord, changes: { name?: string; description?: string; config?: unknown }): Promise<ToolRecord> {
    const config = changes.config === undefined ? undefined : (parseConfig(tool.type, changes.config) as Record<string, unknown>);
    return this.d.store.update(tool, { name: changes.name, description: changes.description, config });
  }

  /** Deletes a tool (the surface checked content:write on its project). */
  async delete(tool: ToolRecord): Promise<void> {
    await this.d.store.delete(tool.id);
    if (tool.type === 'search' && (await this.d.store.searchToolCount(tool.project_id)) === 0) await this.d.indexer.disable(tool.project_id);
  }

  /** The index state of a search tool, counted within its subtree. */
  searchIndex(tool: ToolRecord): IndexState {
    if (tool.type !== 'search') throw new DomainError('NOT_FOUND', 'This tool has no search index (it is not a search tool).');
    const root = this.rootOf(tool).path;
    const state = this.d.indexer.state(tool.project_id, root);
    if (!state) throw new DomainError('NOT_FOUND', 'Search index not found.');
    return state;
  }

  /**
   * Runs a tool as `principal` with `args` (validated against the type's input schema: 422 naming
   * the field). The same function every surface calls. `options` run the tool over a view of the
   * content and a sandbox of that view instead of the store itself (an agent's workspace);
   * `root` is the tool's node when the caller has just read it for this request (not read twice);
   * `via` what the call came through, for the messages of the changes it makes.
   */
  async call(principal: Principal, tool: ToolRecord, args: unknown, options: { content?: ToolContent; sandbox?: ToolSandbox; root?: NodeInfo; via?: string } = {}): Promise<unknown> {
    const type = toolTypes.get(tool.type);
    if (!type) throw new DomainError('NOT_FOUND', `Tool type ${tool.type} is not available on this server.`);
    const parsed = type.input.safeParse(args ?? {});
    if (!parsed.success) {
      throw new DomainError(
        'VALIDATION_ERROR',
        `Invalid arguments: ${parsed.error.issues.map((i) => `${['arguments', ...i.path].join('.')}: ${i.message}`).join('; ')}`,
        parsed.error.issues.map((i) => ({ field: ['arguments', ...i.path].join('.'), message: i.message })),
      );
    }
    // The caller must at least see the project (404 otherwise) before anything about the tool's node is said.
    await this.d.authorizer.requireProject(principal, tool.project_id, 'project:read');
    const { node: rootNode, path: root } = this.rootOf(tool, options.root);
    const { access } = this.d;
    const inTool = (path: string) => pathInScope(root, path);
    const invocation: ToolInvocation<unknown, unknown> = {
      env: { ...this.d, content: options.content ?? this.d.content, sandbox: options.sandbox ?? this.d.sandbox },
      tool,
      config: parseConfig(tool.type, tool.config),
      args: parsed.data,
      principal,
      root,
      rootNode,
      grant: (action: ContentAction) => access.grant(principal, tool.project_id, action),
      inTool,
      via: options.via,
      resolve(g, relative, options = {}) {
        const field = options.field ?? 'arguments.path';
        const rel = normalizePath(relative ?? '', field);
        if (rel !== '' && rootNode && rootNode.type !== 'folder') throw invalidField(field, 'this tool is bound to a single node: leave path empty');
        const path = rel === '' ? root : joinPath(root, rel);
        if (!inTool(path)) throw invalidField(field, "outside the tool's node");
        if (options.listing) access.listing(g, path);
        else access.requirePath(g, path);
        return path;
      },
    };
    return type.run(invocation);
  }

  /**
   * The tool's node as it is now (it follows moves); a tool whose node is gone answers 404. `read`
   * is that node as the caller already read it for this same request (an MCP endpoint's folder).
   */
  private rootOf(tool: ToolRecord, read?: NodeInfo): { node: NodeInfo | null; path: string } {
    if (!tool.node_id) return { node: null, path: '' };
    const node = read?.id === tool.node_id ? read : this.d.content.findById(tool.node_id);
    if (!node || node.projectId !== tool.project_id || node.state !== 'active') throw new DomainError('NOT_FOUND', "The tool's node no longer exists (it was deleted or is in the trash).");
    return { node, path: node.path };
  }
}

function parseConfig(type: string, config: unknown): unknown {
  const parsed = toolTypes.get(type)!.config.safeParse(config);
  if (!parsed.success) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `Invalid config: ${parsed.error.issues.map((i) => `${['config', ...i.path].join('.')}: ${i.message}`).join('; ')}`,
      parsed.error.issues.map((i) => ({ field: ['config', ...i.path].join('.'), message: i.message })),
    );
  }
  return parsed.data;
}
