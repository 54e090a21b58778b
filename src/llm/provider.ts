/**
 * What the chat loop needs of a language model, whatever its wire format: a streamed reply of
 * text pieces and tool calls to a system prompt, a message history and tool definitions. One
 * adapter per wire format (OpenAI-compatible chat/completions, Anthropic messages) implements it
 * with the provider's official SDK.
 */

/** A tool as the model is offered it: the JSON Schema of its arguments, unchanged. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call the model made, its arguments parsed (an unparseable string becomes `{}` plus `argumentsError`). */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's arguments were not a JSON object; the loop reports it back to the model. */
  argumentsError?: string;
}

/** The conversation as the loop keeps it; adapters translate it to their wire format. */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: ToolCallRequest[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError: boolean };

export interface ChatRequest {
  /** The provider's own model id (without the `provider:` prefix). */
  model: string;
  system: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  temperature?: number;
  /** Upper bound of output tokens for this reply. */
  maxTokens?: number;
  /** Aborts the upstream request (the client went away, or the turn was cancelled). */
  signal: AbortSignal;
}

/**
 * A streamed reply, in the order the provider sent it. `text` pieces come as they arrive; a
 * `tool_call` comes once its arguments are complete; `finish` comes last, once.
 */
export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCallRequest }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' | 'other'; usage: { inputTokens: number; outputTokens: number } };

export interface ChatProvider {
  /** `openai`, `anthropic`, or the prefix an OpenAI-compatible server was named by (`ollama`). */
  readonly name: string;
  /** Throws ProviderError (before or during the stream) for the provider's failures. */
  stream(request: ChatRequest): AsyncIterable<StreamEvent>;
}

export type ProviderErrorKind = 'unauthorized' | 'rate_limited' | 'bad_request' | 'unavailable' | 'timeout' | 'aborted';

/** A provider failure as the loop reports it: what kind, the HTTP status when there was one, and the provider's message. */
export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status: number | null = null,
    /** For rate limits: how long the provider asked to wait, ms (from retry-after), when it said. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
