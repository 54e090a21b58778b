import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { toProviderError } from './errors.ts';
import { toOpenAiMessages, toOpenAiTools } from './openaiMessages.ts';
import { ProviderError, type ChatProvider, type ChatRequest, type StreamEvent } from './provider.ts';
import { parseToolArguments } from './toolArguments.ts';
import { UpstreamSignal } from './upstreamSignal.ts';

export interface OpenAiProviderOptions {
  /** `openai`, or the prefix an OpenAI-compatible server is named by (`ollama`). */
  name: string;
  apiKey: string;
  /** Including `/v1`; OpenAI's own when absent. */
  baseURL?: string;
  /** Wait for the response headers, and longest silence inside the streamed reply (default 180 s). */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 180_000;

/** A tool call being streamed: id and name come first, the arguments in pieces. */
interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

/** The chat/completions wire format, spoken by OpenAI and by OpenAI-compatible servers (Ollama, vLLM, ...). */
export class OpenAiProvider implements ChatProvider {
  readonly name: string;
  private client: OpenAI | undefined;
  private readonly apiKey: string;
  private readonly baseURL: string;
  private readonly timeoutMs: number;

  constructor(o: OpenAiProviderOptions) {
    this.name = o.name;
    this.apiKey = o.apiKey;
    this.baseURL = o.baseURL ?? 'https://api.openai.com/v1';
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamEvent> {
    const sdk = await loadSdk();
    this.client ??= new sdk({
      apiKey: this.apiKey,
      // Explicit values, so that OPENAI_* variables in the environment do not redirect or tag requests.
      baseURL: this.baseURL,
      organization: null,
      project: null,
      // The chat loop decides about retries; the SDK would otherwise retry silently.
      maxRetries: 0,
      timeout: this.timeoutMs,
    });
    const upstream = new UpstreamSignal(request.signal, this.timeoutMs);
    try {
      const chunks = await this.client.chat.completions.create(this.body(request), { signal: upstream.signal });
      upstream.alive();
      const calls = new Map<number, PendingCall>();
      let finishReason: string | null = null;
      let sawToolCalls = false;
      const usage = { inputTokens: 0, outputTokens: 0 };
      for await (const chunk of chunks) {
        upstream.alive();
        if (chunk.usage) usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
        if (chunk.usage) usage.outputTokens = chunk.usage.completion_tokens ?? 0;
        const choice = chunk.choices.find((c) => c.index === 0);
        if (!choice) continue;
        // A refusal is what the model said instead of an answer: the user should see it.
        const text = choice.delta?.content || choice.delta?.refusal;
        if (text) yield { type: 'text', text };
        for (const [position, piece] of (choice.delta?.tool_calls ?? []).entries()) addPiece(calls, piece, position);
        if (choice.finish_reason) {
          finishReason = choice.finish_reason;
          sawToolCalls ||= calls.size > 0;
          yield* drain(calls);
        }
      }
      const cut = upstream.cut();
      if (cut) throw toProviderError(null, this.context(sdk, upstream));
      if (finishReason === null) throw new ProviderError('unavailable', `${this.name}: the reply ended before it finished`);
      yield { type: 'finish', reason: finishOf(finishReason, sawToolCalls), usage };
    } catch (e) {
      throw toProviderError(e, this.context(sdk, upstream));
    } finally {
      upstream.dispose();
    }
  }

  private body(r: ChatRequest): ChatCompletionCreateParamsStreaming {
    return {
      model: r.model,
      messages: toOpenAiMessages(r.system, r.messages),
      ...(r.tools.length > 0 ? { tools: toOpenAiTools(r.tools) } : {}),
      ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
      // OpenAI itself wants max_completion_tokens (max_tokens is refused by its reasoning models);
      // compatible servers generally know only max_tokens.
      ...(r.maxTokens !== undefined ? (this.name === 'openai' ? { max_completion_tokens: r.maxTokens } : { max_tokens: r.maxTokens }) : {}),
      stream: true,
      stream_options: { include_usage: true },
    };
  }

  private context(sdk: typeof OpenAI, upstream: UpstreamSignal) {
    return { provider: this.name, sdk, upstream, apiKey: this.apiKey };
  }
}

/** The SDK is loaded on first use: it is ~150 modules, and most processes never chat. */
let sdkModule: Promise<typeof OpenAI> | undefined;
function loadSdk(): Promise<typeof OpenAI> {
  return (sdkModule ??= import('openai').then((m) => m.default));
}

type ToolCallPiece = ChatCompletionChunk.Choice.Delta.ToolCall;

function addPiece(calls: Map<number, PendingCall>, piece: ToolCallPiece, position: number): void {
  // Some compatible servers leave out `index`; their calls then come whole, one per position.
  const index = piece.index ?? position;
  const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
  calls.set(index, call);
  if (piece.id && !call.id) call.id = piece.id;
  if (piece.function?.name && !call.name) call.name = piece.function.name;
  if (piece.function?.arguments) call.arguments += piece.function.arguments;
}

function* drain(calls: Map<number, PendingCall>): Generator<StreamEvent> {
  for (const [index, c] of [...calls.entries()].sort(([a], [b]) => a - b)) {
    yield { type: 'tool_call', call: { id: c.id || `call_${index}`, name: c.name, ...parseToolArguments(c.arguments) } };
  }
  calls.clear();
}

function finishOf(reason: string, sawToolCalls: boolean): 'stop' | 'tool_calls' | 'length' | 'other' {
  if (reason === 'tool_calls') return 'tool_calls';
  // Some compatible servers end a reply that called tools with `stop`; the calls are what matters.
  if (reason === 'stop') return sawToolCalls ? 'tool_calls' : 'stop';
  if (reason === 'length') return 'length';
  return 'other';
}
