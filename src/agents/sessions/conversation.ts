import type { ChatMessage, ToolCallRequest } from '../../llm/provider.ts';

export type MessageRole = 'user' | 'assistant' | 'tool_call' | 'tool_result';

/**
 * A stored message: one row per user text, assistant text, tool call and tool result, so a
 * client pages through a conversation as it happened. `content` by role:
 * user, assistant `{text}`; tool_call `{id, name, arguments, arguments_error?}`;
 * tool_result `{tool_call_id, name, content, is_error}`.
 */
export interface MessageRow {
  role: MessageRole;
  content: Record<string, unknown>;
}

/** The rows of provider-shaped messages: an assistant message becomes its text (when any) and one row per tool call. */
export function toRows(messages: readonly ChatMessage[]): MessageRow[] {
  return messages.flatMap((m): MessageRow[] => {
    if (m.role === 'user') return [{ role: 'user', content: { text: m.content } }];
    if (m.role === 'tool') return [{ role: 'tool_result', content: { tool_call_id: m.toolCallId, name: m.name, content: m.content, is_error: m.isError } }];
    const text: MessageRow[] = m.content !== '' || m.toolCalls.length === 0 ? [{ role: 'assistant', content: { text: m.content } }] : [];
    return [
      ...text,
      ...m.toolCalls.map((c): MessageRow => ({
        role: 'tool_call',
        content: { id: c.id, name: c.name, arguments: c.arguments, ...(c.argumentsError !== undefined ? { arguments_error: c.argumentsError } : {}) },
      })),
    ];
  });
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * The provider conversation of stored rows (the inverse of toRows): an assistant text row starts
 * an assistant message, tool_call rows join the assistant message just before them (or start
 * one with no text), tool_result rows become tool messages.
 */
export function toConversation(rows: readonly MessageRow[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const { role, content: c } of rows) {
    const last = out[out.length - 1];
    if (role === 'user') out.push({ role: 'user', content: str(c.text) });
    else if (role === 'assistant') out.push({ role: 'assistant', content: str(c.text), toolCalls: [] });
    else if (role === 'tool_result') out.push({ role: 'tool', toolCallId: str(c.tool_call_id), name: str(c.name), content: str(c.content), isError: c.is_error === true });
    else {
      const call: ToolCallRequest = { id: str(c.id), name: str(c.name), arguments: (c.arguments ?? {}) as Record<string, unknown> };
      if (typeof c.arguments_error === 'string') call.argumentsError = c.arguments_error;
      if (last?.role === 'assistant') last.toolCalls.push(call);
      else out.push({ role: 'assistant', content: '', toolCalls: [call] });
    }
  }
  return answerEveryCall(out);
}

/** The result the model is shown for a call whose turn ended (cancelled, failed, crashed) before it ran. */
export const UNANSWERED_CALL = 'No result: the turn ended before this tool call ran.';

/**
 * Both providers refuse a history where a tool call has no result right after it, and a tool
 * result without its call. A turn cut short leaves such a history; this answers each unanswered
 * call with an error result and drops orphan results, so the session can go on.
 */
function answerEveryCall(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let open: ToolCallRequest[] = [];
  const close = () => {
    for (const c of open) out.push({ role: 'tool', toolCallId: c.id, name: c.name, content: UNANSWERED_CALL, isError: true });
    open = [];
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      const i = open.findIndex((c) => c.id === m.toolCallId);
      if (i === -1) continue;
      open.splice(i, 1);
      out.push(m);
      continue;
    }
    close();
    out.push(m);
    if (m.role === 'assistant') open = [...m.toolCalls];
  }
  close();
  return out;
}
