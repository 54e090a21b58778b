import type { Principal } from '../../auth/principal.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../../domain/pagination.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { Agent } from '../config/agentRecord.ts';
import type { Agents } from '../config/agents.ts';
import type { MessageStore, StoredMessage } from './messageStore.ts';
import type { ChatSession, SessionStore } from './sessionStore.ts';

export interface ChatSessionsDeps {
  agents: Pick<Agents, 'readable'>;
  store: SessionStore;
  messages: MessageStore;
  authorizer: Authorizer;
}

const sessionNotFound = () => new DomainError('NOT_FOUND', 'Chat session not found.');

/**
 * Chat sessions (spec 4.8). Whoever may chat with an agent (content:read on its project, or the
 * agent's own key) starts sessions with it; a session is seen by the principal that started it,
 * and by the project's admins (keys:manage), who may also delete it. Everyone else: not found.
 * Surfaces that have checked the project (REST routes declare project:read on the agent's or the
 * session's project) call the methods taking a record; the finer part stays here.
 */
export class ChatSessions {
  constructor(private readonly d: ChatSessionsDeps) {}

  /** Starts a session with an agent the caller sees (its project, and a key only its own agent: the route checked both). */
  create(principal: Principal, agent: Agent, title?: string): Promise<ChatSession> {
    return this.d.store.create({ agentId: agent.connection.id, projectId: agent.connection.project_id, title, createdBy: principal.id });
  }

  /**
   * The sessions of an agent or of a project the principal may see: all of them for an admin, its
   * own otherwise. Either may be named, so the whole check is made here.
   */
  async list(principal: Principal, filter: { agentId?: string; projectId?: string }, page: Page): Promise<Paged<ChatSession>> {
    let projectId = filter.projectId;
    if (filter.agentId !== undefined) {
      const agent = await this.d.agents.readable(principal, filter.agentId);
      if (projectId !== undefined && projectId !== agent.connection.project_id) return { items: [], total: 0 };
      projectId = agent.connection.project_id;
    } else if (principal.kind === 'key') {
      // A key chats only as its own agent: its sessions are those of that agent.
      await this.d.authorizer.requireProject(principal, projectId!, 'project:read');
      if (principal.connection.kind !== 'agent') throw new DomainError('FORBIDDEN', "Only an agent's own key lists chat sessions (its own).");
      filter = { agentId: principal.connection.id };
    } else {
      await this.d.authorizer.requireProject(principal, projectId!, 'content:read');
    }
    const createdBy = (await this.isAdmin(principal, projectId!)) ? undefined : principal.id;
    return this.d.store.list({ agentId: filter.agentId, projectId, createdBy }, page);
  }

  /** A session the principal may see (404 otherwise), its agent still within the principal's reach: the whole check, for a session named where no route checked it (a chat turn's). */
  async visible(principal: Principal, id: string): Promise<ChatSession> {
    const session = await this.d.store.find(id);
    if (!session) throw sessionNotFound();
    try {
      await this.d.agents.readable(principal, session.agent_id);
    } catch (e) {
      if ((e as DomainError).code === 'NOT_FOUND') throw sessionNotFound();
      throw e;
    }
    return await this.seenBy(principal, session);
  }

  /**
   * The finer part of seeing a session once the caller is known to see its project: a key sees
   * only sessions of its own agent, and only an admin sees the sessions others started.
   */
  async seenBy(principal: Principal, session: ChatSession): Promise<ChatSession> {
    if (principal.kind === 'key' && principal.connection.id !== session.agent_id) throw sessionNotFound();
    if (session.created_by !== principal.id && !(await this.isAdmin(principal, session.project_id))) throw sessionNotFound();
    return session;
  }

  async rename(principal: Principal, session: ChatSession, title: string): Promise<ChatSession> {
    return (await this.d.store.rename((await this.seenBy(principal, session)).id, title)) ?? throwing(sessionNotFound());
  }

  async delete(principal: Principal, session: ChatSession): Promise<ChatSession> {
    await this.d.store.delete((await this.seenBy(principal, session)).id);
    return session;
  }

  async messages(principal: Principal, session: ChatSession, page: { afterSeq: number; limit: number }): Promise<{ items: StoredMessage[]; next: number | null }> {
    return this.d.messages.page((await this.seenBy(principal, session)).id, page);
  }

  private async isAdmin(principal: Principal, projectId: string): Promise<boolean> {
    if (principal.kind !== 'user') return false;
    try {
      await this.d.authorizer.requireProject(principal, projectId, 'keys:manage');
      return true;
    } catch {
      return false;
    }
  }
}

function throwing(e: Error): never {
  throw e;
}
