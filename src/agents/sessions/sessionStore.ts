import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { Page, Paged } from '../../domain/pagination.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A conversation with an agent; its messages are in MessageStore. */
export interface ChatSession {
  id: string;
  agent_id: string;
  project_id: string;
  title: string;
  /** The principal that started it: a user id, or the id of the key's connection. */
  created_by: string;
  created_at: string;
  /** Moves with every appended message: lists show the latest conversations first. */
  updated_at: string;
}

export interface SessionFilter {
  agentId?: string;
  projectId?: string;
  /** Only the sessions this principal started. */
  createdBy?: string;
}

/** The `chat_sessions` table, on the metadata store. Authorization is the caller's (ChatSessions). */
export class SessionStore {
  constructor(private readonly metadata: MetadataStore) {}

  async create(input: { agentId: string; projectId: string; title?: string; createdBy: string }): Promise<ChatSession> {
    const now = nowIso();
    const session: ChatSession = {
      id: newId('chat'),
      agent_id: input.agentId,
      project_id: input.projectId,
      title: input.title ?? '',
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
    };
    await this.metadata.db.insertInto('chat_sessions').values(session).execute();
    return session;
  }

  async find(id: string): Promise<ChatSession | null> {
    return (await this.metadata.db.selectFrom('chat_sessions').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  /** Newest activity first. */
  async list(filter: SessionFilter, page: Page): Promise<Paged<ChatSession>> {
    let q = this.metadata.db.selectFrom('chat_sessions');
    if (filter.agentId !== undefined) q = q.where('agent_id', '=', filter.agentId);
    if (filter.projectId !== undefined) q = q.where('project_id', '=', filter.projectId);
    if (filter.createdBy !== undefined) q = q.where('created_by', '=', filter.createdBy);
    const items = await q.selectAll().orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
    const { n } = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { items, total: Number(n) };
  }

  /** The session renamed; null when it was deleted meanwhile. */
  async rename(id: string, title: string): Promise<ChatSession | null> {
    return (await this.metadata.db.updateTable('chat_sessions').set({ title, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst()) ?? null;
  }

  async touch(id: string, at: string): Promise<void> {
    await this.metadata.db.updateTable('chat_sessions').set({ updated_at: at }).where('id', '=', id).execute();
  }

  /** Its messages go with it; the agent's executions of it stay (their session_id becomes null). */
  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('chat_sessions').where('id', '=', id).execute();
  }
}
