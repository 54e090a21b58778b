import { inTransaction, type Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { DomainError } from '../../errors/domainError.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { ChatMessage } from '../../llm/provider.ts';
import { toConversation, toRows, type MessageRole } from './conversation.ts';
import type { SessionStore } from './sessionStore.ts';

/** A message as stored and listed: its place in the session (`seq`, from 1) and the turn that produced it. */
export interface StoredMessage {
  id: string;
  session_id: string;
  seq: number;
  role: MessageRole;
  content: Record<string, unknown>;
  execution_id: string | null;
  created_at: string;
}

type Row = Omit<StoredMessage, 'content'> & { content: string };
const fromRow = (r: Row): StoredMessage => ({ ...r, content: JSON.parse(r.content) as Record<string, unknown> });

/** The `chat_messages` table: a session's conversation, in order. Authorization is the caller's. */
export class MessageStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(
    private readonly db: Db,
    private readonly sessions: SessionStore,
  ) {
    this.sql = statementCache(db);
  }

  /**
   * Appends provider-shaped messages (see conversation.ts for the rows they become) after the
   * session's last one. The sequence numbers are taken in the same write transaction as the
   * rows, so concurrent appends to one session never collide or interleave within a call.
   */
  append(sessionId: string, messages: readonly ChatMessage[], executionId: string | null = null): StoredMessage[] {
    const rows = toRows(messages);
    return inTransaction(this.db, () => {
      if (!this.sessions.find(sessionId)) throw new DomainError('NOT_FOUND', 'Chat session not found.');
      const { last } = this.sql('SELECT COALESCE(MAX(seq), 0) AS last FROM chat_messages WHERE session_id = ?').get(sessionId) as { last: number };
      const now = nowIso();
      const stored = rows.map(
        (r, i): StoredMessage => ({ id: newId('msg'), session_id: sessionId, seq: last + 1 + i, role: r.role, content: r.content, execution_id: executionId, created_at: now }),
      );
      const insert = this.sql(
        'INSERT INTO chat_messages (id, session_id, seq, role, content, execution_id, created_at) VALUES (@id, @session_id, @seq, @role, @content, @execution_id, @created_at)',
      );
      for (const m of stored) insert.run({ ...m, content: JSON.stringify(m.content) });
      if (stored.length) this.sessions.touch(sessionId, now);
      return stored;
    });
  }

  /** The whole conversation as the provider takes it (unanswered tool calls answered, see toConversation). */
  history(sessionId: string): ChatMessage[] {
    const rows = (this.sql('SELECT role, content FROM chat_messages WHERE session_id = ? ORDER BY seq').all(sessionId) as { role: MessageRole; content: string }[]).map(
      (r) => ({ role: r.role, content: JSON.parse(r.content) as Record<string, unknown> }),
    );
    return toConversation(rows);
  }

  /** The messages after `afterSeq` (0: from the start), in order; `next` is the after_seq of the following page, null at the end. */
  page(sessionId: string, page: { afterSeq: number; limit: number }): { items: StoredMessage[]; next: number | null } {
    const rows = this.sql('SELECT * FROM chat_messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(sessionId, page.afterSeq, page.limit + 1) as Row[];
    const items = rows.slice(0, page.limit).map(fromRow);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!.seq : null };
  }
}
