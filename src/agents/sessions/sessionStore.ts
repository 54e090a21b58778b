import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
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

/** The `chat_sessions` table. Authorization is the caller's (ChatSessions). */
export class SessionStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  create(input: { agentId: string; projectId: string; title?: string; createdBy: string }): ChatSession {
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
    this.sql(
      'INSERT INTO chat_sessions (id, agent_id, project_id, title, created_by, created_at, updated_at) VALUES (@id, @agent_id, @project_id, @title, @created_by, @created_at, @updated_at)',
    ).run(session);
    return session;
  }

  find(id: string): ChatSession | null {
    return (this.sql('SELECT * FROM chat_sessions WHERE id = ?').get(id) as ChatSession | undefined) ?? null;
  }

  /** Newest activity first. */
  list(filter: SessionFilter, page: Page): Paged<ChatSession> {
    const where = `WHERE (@agentId IS NULL OR agent_id = @agentId) AND (@projectId IS NULL OR project_id = @projectId) AND (@createdBy IS NULL OR created_by = @createdBy)`;
    const params = { agentId: filter.agentId ?? null, projectId: filter.projectId ?? null, createdBy: filter.createdBy ?? null };
    const items = this.sql(`SELECT * FROM chat_sessions ${where} ORDER BY updated_at DESC, id DESC LIMIT @limit OFFSET @offset`).all({
      ...params,
      limit: page.limit,
      offset: page.offset,
    }) as ChatSession[];
    const { n } = this.sql(`SELECT COUNT(*) AS n FROM chat_sessions ${where}`).get(params) as { n: number };
    return { items, total: n };
  }

  rename(id: string, title: string): ChatSession {
    this.sql('UPDATE chat_sessions SET title = ?, updated_at = ? WHERE id = ?').run(title, nowIso(), id);
    return this.find(id)!;
  }

  touch(id: string, at: string): void {
    this.sql('UPDATE chat_sessions SET updated_at = ? WHERE id = ?').run(at, id);
  }

  /** Its messages go with it; the agent's executions of it stay (their session_id becomes null). */
  delete(id: string): void {
    this.sql('DELETE FROM chat_sessions WHERE id = ?').run(id);
  }
}
