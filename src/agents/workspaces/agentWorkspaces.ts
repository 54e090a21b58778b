import type { Principal } from '../../auth/principal.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { pathInScope } from '../../policies/scope.ts';
import type { SandboxExecutor } from '../../sandbox/executor.ts';
import { AccessStore } from '../config/accessStore.ts';
import { currentPath } from '../config/reachNode.ts';
import { actingThrough } from '../tools/reach.ts';
import { KeyedLock } from '../../util/keyedLock.ts';
import { WorkspaceContent } from './workspaceContent.ts';
import { completeDraft, type CompletedChange } from './workspaceMerge.ts';
import { draftChanges, type DraftChange } from './workspaceStatus.ts';
import { WorkspaceStore, type WorkspaceRecord } from './workspaceStore.ts';

export interface AgentWorkspacesDeps {
  metadata: MetadataStore;
  content: ContentStore;
  access: ContentAccess;
  authorizer: Pick<Authorizer, 'requireProject'>;
  sandbox: SandboxExecutor;
}

export interface WorkspaceStatus {
  workspace: WorkspaceRecord;
  changes: DraftChange[];
}

/** A read_write access of an agent where its node is now. */
interface WritableReach {
  id: string;
  path: string;
}

const agentNotFound = () => new DomainError('NOT_FOUND', 'Agent not found.');
const noWorkspace = () => new DomainError('NOT_FOUND', 'This agent has no open workspace.');

/**
 * Agents' workspaces (spec 4.10): at most one per agent, a durable draft over its read_write
 * accesses that its tools change across turns without touching the live content, completed as ONE
 * commit by the agent or discarded. Opening, completing and discarding need content:write on the
 * agent's project (or the agent's own key); the status needs content:read. An agent the caller
 * cannot see is "not found". The surface checks that the caller sees the agent's project first
 * (project:read, which for members carries content:read); the rest is checked here.
 */
export class AgentWorkspaces {
  private readonly store: WorkspaceStore;
  private readonly accesses: AccessStore;
  private readonly lock = new KeyedLock();

  constructor(private readonly d: AgentWorkspacesDeps) {
    this.store = new WorkspaceStore(d.metadata);
    this.accesses = new AccessStore(d.metadata);
  }

  /** Opens the agent's workspace over its read_write accesses as they are now (422 without any, 409 when one is open). */
  async open(principal: Principal, agent: ConnectionRecord): Promise<WorkspaceRecord> {
    await this.actingOn(principal, agent, 'content:write');
    const roots = outermost((await this.writable(agent)).map((a) => a.path));
    if (roots.length === 0) {
      throw new DomainError('VALIDATION_ERROR', 'The agent has no read_write access: a workspace holds drafts of what it may write.', [
        { field: 'agent_id', message: 'the agent has no read_write access' },
      ]);
    }
    return this.store.create({
      agentId: agent.id,
      projectId: agent.project_id,
      baseVersion: this.d.content.projectVersion(agent.project_id),
      roots,
      createdBy: principal.id,
    });
  }

  /**
   * The agent's open workspace as tools see it, or null (no check: the chat loop, which has
   * authorized the turn, asks each turn and routes the agent's writes and bash runs into it).
   */
  async find(agentId: string): Promise<WorkspaceContent | null> {
    const record = await this.store.find(agentId);
    if (!record) return null;
    return new WorkspaceContent({ store: this.store, content: this.d.content, sandbox: this.d.sandbox, lock: this.lock }, record, await this.store.entries(agentId));
  }

  async status(principal: Principal, agent: ConnectionRecord): Promise<WorkspaceStatus> {
    await this.actingOn(principal, agent, 'content:read');
    const workspace = (await this.store.find(agent.id)) ?? throwing(noWorkspace());
    return { workspace, changes: await draftChanges(this.d.content, workspace.projectId, await this.store.rows(agent.id)) };
  }

  /**
   * Merges the draft into the live content as ONE commit by the agent and closes the workspace.
   * A conflict (409, with the regions) writes nothing and keeps the workspace; a path the agent
   * may no longer write (its accesses changed) is FORBIDDEN, also writing nothing.
   */
  async complete(principal: Principal, agent: ConnectionRecord, message?: string): Promise<{ version: number | null; changes: CompletedChange[] }> {
    await this.actingOn(principal, agent, 'content:write');
    return this.lock.run(agent.id, async () => {
      const workspace = (await this.store.find(agent.id)) ?? throwing(noWorkspace());
      const rows = await this.store.rows(agent.id);
      const grants = await this.grantsFor(await this.writable(agent), agent, rows.map((r) => r.path));
      const actor = grants[0]?.actor;
      const result = actor
        ? await completeDraft(this.d.content, workspace.projectId, actor, rows, message ?? `Agent "${agent.name}": workspace of ${rows.length} change(s)`)
        : { version: null, changes: [] };
      await this.store.delete(agent.id);
      return result;
    });
  }

  /** Drops the draft (after a bash run or write in progress ends). */
  async discard(principal: Principal, agent: ConnectionRecord): Promise<void> {
    await this.actingOn(principal, agent, 'content:write');
    await this.lock.run(agent.id, async () => {
      if (!(await this.store.delete(agent.id))) throw noWorkspace();
    });
  }

  /**
   * The finer part, once the caller is known to see the agent's project: a key acts only on its
   * own agent (404 for others); a member needs `action` (content:read comes with seeing the project).
   */
  private async actingOn(principal: Principal, agent: ConnectionRecord, action: 'content:read' | 'content:write'): Promise<void> {
    if (principal.kind === 'key') {
      if (principal.connection.id !== agent.id) throw agentNotFound();
      return;
    }
    if (action === 'content:write') await this.d.authorizer.requireProject(principal, agent.project_id, action);
  }

  /** The agent's read_write accesses with their nodes' current paths (those whose node is gone grant nothing). */
  private async writable(agent: ConnectionRecord): Promise<WritableReach[]> {
    return (await this.accesses.list(agent.id))
      .filter((a) => a.mode === 'read_write')
      .flatMap((a) => {
        const path = currentPath({ content: this.d.content }, agent.project_id, a.node_id);
        return path === null ? [] : [{ id: a.id, path }];
      });
  }

  /**
   * The agent's write grant for each path, through the access that covers it now, decided by the
   * policy like any write of the agent: a path no read_write access covers any more is FORBIDDEN.
   */
  private async grantsFor(reach: readonly WritableReach[], agent: ConnectionRecord, paths: readonly string[]): Promise<ContentGrant[]> {
    const grants: ContentGrant[] = [];
    for (const path of paths) {
      const covering = reach.filter((a) => pathInScope(a.path, path));
      if (covering.length === 0) {
        throw new DomainError('FORBIDDEN', `"${path}" is no longer writable by this agent (its accesses changed since the workspace was opened); nothing was written.`, { path });
      }
      const a = covering.reduce((x, y) => (y.path.length > x.path.length ? y : x));
      const g = await this.d.access.grant(actingThrough(agent, { id: a.id, path: a.path, mode: 'read_write' }), agent.project_id, 'content:write');
      this.d.access.requirePath(g, path);
      grants.push(g);
    }
    return grants;
  }
}

/** The paths none of the others contains (an access inside another adds no folder to draft in). */
function outermost(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((q) => q !== p && pathInScope(q, p))).sort();
}

function throwing(e: Error): never {
  throw e;
}
