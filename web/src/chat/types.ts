/** The events of `POST /agents` (README: Chat with your content), one `data:` line each. */
export type ChatEvent =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'tool_result'; id: string; name: string; content: unknown; is_error: boolean; truncated?: boolean }
  | { type: 'error'; code: string; message: string; retry_after_ms?: number }
  | { type: 'done'; session_id: string; execution_id: string; status: string; usage: { input_tokens: number; output_tokens: number } };

/** An agent as `GET /agent-config/` lists it (the fields the chat uses). */
export interface AgentSummary {
  id: string;
  name: string;
  model: string;
  status: string;
  is_default: boolean;
}

/** A version an agent wrote: the node's path and the version number. */
export interface WrittenVersion {
  path: string;
  version: number;
}

export interface ExecutionSummary {
  id: string;
  versions_written: WrittenVersion[];
}
