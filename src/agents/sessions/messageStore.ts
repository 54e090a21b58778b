import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { ChatMessagesTable } from '../../db/metadata/tables/agents.ts';
import { DomainError } from '../../errors/domainError.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { ChatMessage } from '../../llm/provider.ts';
import { toConversation, toRows, type MessageRole } from './conversation.ts';

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

const fromRow = (r: ChatMessagesTable): StoredMessage => ({ ...r, content: JSON.parse(r.content) as Record<string, unknown> });
const sessionNotFound = () => new DomainError('NOT_FOUND', 'Chat session not found.');

/** The `chat_messages` table, on the metadata store: a session's conversation, in order. Authorization is the caller's. */
export class MessageStore {
  constructor(private readonly metadata: MetadataStore) {}

  /**
   * Appends provider-shaped messages (see conversation.ts for the rows they become) after the
   * session's last one. The transaction first moves the session's `updated_at`, which locks its
   * row (PostgreSQL; SQLite's transaction holds the write lock anyway): concurrent appends to one
   * session take their sequence numbers in turn, never colliding or interleaving within a call.
   */
  async append(sessionId: string, messages: readonly ChatMessage[], executionId: string | null = null): Promise<StoredMessage[]> {
    const rows = toRows(messages);
    if (rows.length === 0) {
      const exists = await this.metadata.db.selectFrom('chat_sessions').select('id').where('id', '=', sessionId).executeTakeFirst();
      if (!exists) throw sessionNotFound();
      return [];
    }
    return this.metadata.transaction(async (trx) => {
      const now = nowIso();
      const touched = await trx.updateTable('chat_sessions').set({ updated_at: now }).where('id', '=', sessionId).executeTakeFirst();
      if (touched.numUpdatedRows === 0n) throw sessionNotFound();
      const { last } = await trx
        .selectFrom('chat_messages')
        .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('last'))
        .where('session_id', '=', sessionId)
        .executeTakeFirstOrThrow();
      const stored = rows.map(
        (r, i): StoredMessage => ({ id: newId('msg'), session_id: sessionId, seq: Number(last) + 1 + i, role: r.role, content: r.content, execution_id: executionId, created_at: now }),
      );
      await trx
        .insertInto('chat_messages')
        .values(stored.map((m) => ({ ...m, content: JSON.stringify(m.content) })))
        .execute();
      return stored;
    });
  }

  /** The whole conversation as the provider takes it (unanswered tool calls answered, see toConversation). */
  async history(sessionId: string): Promise<ChatMessage[]> {
    const rows = await this.metadata.db.selectFrom('chat_messages').select(['role', 'content']).where('session_id', '=', sessionId).orderBy('seq').execute();
    return toConversation(rows.map((r) => ({ role: r.role, content: JSON.parse(r.content) as Record<string, unknown> })));
  }

  /** The messages after `afterSeq` (0: from the start), in order; `next` is the after_seq of the following page, null at the end. */
  async page(sessionId: string, page: { afterSeq: number; limit: number }): Promise<{ items: StoredMessage[]; next: number | null }> {
    const rows = await this.metadata.db
      .selectFrom('chat_messages')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('seq', '>', page.afterSeq)
      .orderBy('seq')
      .limit(page.limit + 1)
      .execute();
    const items = rows.slice(0, page.limit).map(fromRow);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!.seq : null };
  }
}
