import type { ExecutionError, ExecutionRecord, ExecutionToolCall } from './executionStore.ts';

/** Who reads an agent's executions: the principal's id, and whether it administers the project (keys:manage). */
export interface ExecutionViewer {
  principalId: string;
  projectAdmin: boolean;
}

/**
 * An execution as one viewer may see it. `full`: as recorded. `summary`: status, counts and
 * timings; the tool calls keep their name, outcome and duration but not their arguments, and the
 * error only its code (a provider's message may quote the conversation).
 */
export type ExecutionView = Omit<ExecutionRecord, 'tool_calls' | 'error' | 'chat_created_by'> & {
  details: 'full' | 'summary';
  tool_calls: (Omit<ExecutionToolCall, 'arguments'> & { arguments?: ExecutionToolCall['arguments'] })[];
  error: ExecutionError | null;
};

/**
 * A turn's details (tool-call arguments: bash commands, the content of writes) are as private as
 * its chat: shown to whoever started the chat and to the project's admins, like the session's
 * messages (ChatSessions). Anyone else who may read the agent gets the summary; so does everyone
 * but the admins once the chat is deleted (its creator is no longer known).
 */
export function executionView(e: ExecutionRecord, viewer: ExecutionViewer): ExecutionView {
  const { chat_created_by: creator, ...record } = e;
  if (viewer.projectAdmin || (creator !== null && creator === viewer.principalId)) return { ...record, details: 'full' };
  return {
    ...record,
    details: 'summary',
    tool_calls: record.tool_calls.map(({ name, ok, duration_ms }) => ({ name, ok, duration_ms })),
    error: record.error && { code: record.error.code },
  };
}
