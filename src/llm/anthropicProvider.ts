import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsStreaming, StopReason } from '@anthropic-ai/sdk/resources/messages';
import { toAnthropicMessages, toAnthropicTools } from './anthropicMessages.ts';
import { toProviderError } from './errors.ts';
import { DEFAULT_TIMEOUT_MS } from './openaiProvider.ts';
import { ProviderError, type ChatProvider, type ChatRequest, type StreamEvent } from './provider.ts';
import { parseToolArguments } from './toolArguments.ts';
import { UpstreamSignal } from './upstreamSignal.ts';

export interface AnthropicProviderOptions {
  apiKey: string;
  /** Without `/v1`; Anthropic's own when absent. */
  baseURL?: string;
  /** Wait for the response headers, and longest silence inside the streamed reply (default 180 s). */
  timeoutMs?: number;
}

/** Output tokens asked for when the request names no bound (the API requires one). */
export const DEFAULT_MAX_TOKENS = 4096;

/** A tool_use block being streamed: its input arrives as pieces of JSON text. */
interface PendingToolUse {
  id: string;
  name: string;
  json: string;
  /** The block's `input` at its start, used when no pieces follow. */
  startInput: unknown;
}

/** The Anthropic Messages API, streamed. */
export class AnthropicProvider implements ChatProvider {
  readonly name = 'anthropic';
  private client: Anthropic | undefined;
  private readonly apiKey: string;
  private readonly baseURL: string;
  private readonly timeoutMs: number;

  constructor(o: AnthropicProviderOptions) {
    this.apiKey = o.apiKey;
    // Explicit, so that ANTHROPIC_BASE_URL in the environment does not redirect requests.
    this.baseURL = o.baseURL ?? 'https://api.anthropic.com';
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamEvent> {
    // API version 2026-10-21 (the SDK's) answers 400 to any sampling parameter: refuse it here,
    // with a clear reason, rather than drop it silently or send it to be refused.
    if (request.temperature !== undefined) {
      throw new ProviderError('bad_request', 'anthropic: temperature is not supported by the Anthropic API (version 2026-10-21)');
    }
    const sdk = await loadSdk();
    // The chat loop decides about retries; the SDK would otherwise retry silently.
    this.client ??= new sdk({ apiKey: this.apiKey, baseURL: this.baseURL, maxRetries: 0, timeout: this.timeoutMs });
    const upstream = new UpstreamSignal(request.signal, this.timeoutMs);
    try {
      const events = await this.client.messages.create(this.body(request), { signal: upstream.signal });
      upstream.alive();
      const toolUses = new Map<number, PendingToolUse>();
      let stopReason: StopReason | null = null;
      const usage = { inputTokens: 0, outputTokens: 0 };
      for await (const event of events) {
        upstream.alive();
        switch (event.type) {
          case 'message_start': {
            const u = event.message.usage;
            // Cached prompt tokens are counted apart from input_tokens; the request used them all.
            usage.inputTokens = (u?.input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0);
            usage.outputTokens = u?.output_tokens ?? 0;
            break;
          }
          case 'content_block_start':
            if (event.content_block.type === 'tool_use') {
              const b = event.content_block;
              toolUses.set(event.index, { id: b.id, name: b.name, json: '', startInput: b.input });
            }
            break;
          case 'content_block_delta':
            if (event.delta.type === 'text_delta' && event.delta.text) yield { type: 'text', text: event.delta.text };
            else if (event.delta.type === 'input_json_delta') {
              const pending = toolUses.get(event.index);
              if (pending) pending.json += event.delta.partial_json;
            }
            break;
          case 'content_block_stop': {
            const pending = toolUses.get(event.index);
            if (pending) {
              toolUses.delete(event.index);
              yield { type: 'tool_call', call: { id: pending.id, name: pending.name, ...argumentsOf(pending) } };
            }
            break;
          }
          case 'message_delta':
            stopReason = event.delta.stop_reason ?? stopReason;
            // The counts here are cumulative, so they replace those of message_start.
            usage.outputTokens = event.usage.output_tokens ?? usage.outputTokens;
            if (typeof event.usage.input_tokens === 'number') {
              usage.inputTokens = event.usage.input_tokens + (event.usage.cache_creation_input_tokens ?? 0) + (event.usage.cache_read_input_tokens ?? 0);
            }
            break;
        }
      }
      if (upstream.cut()) throw toProviderError(null, this.context(sdk, upstream));
      if (stopReason === null) throw new ProviderError('unavailable', 'anthropic: the reply ended before it finished');
      yield { type: 'finish', reason: finishOf(stopReason), usage };
    } catch (e) {
      throw toProviderError(e, this.context(sdk, upstream));
    } finally {
      upstream.dispose();
    }
  }

  private body(r: ChatRequest): MessageCreateParamsStreaming {
    return {
      model: r.model,
      max_tokens: r.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...(r.system ? { system: r.system } : {}),
      messages: toAnthropicMessages(r.messages),
      ...(r.tools.length > 0 ? { tools: toAnthropicTools(r.tools) } : {}),
      stream: true,
    };
  }

  private context(sdk: typeof Anthropic, upstream: UpstreamSignal) {
    return { provider: this.name, sdk, upstream, apiKey: this.apiKey };
  }
}

/** The SDK is loaded on first use: it is ~250 modules, and most processes never chat. */
let sdkModule: Promise<typeof Anthropic> | undefined;
function loadSdk(): Promise<typeof Anthropic> {
  return (sdkModule ??= import('@anthropic-ai/sdk').then((m) => m.default));
}

function argumentsOf(p: PendingToolUse): ReturnType<typeof parseToolArguments> {
  if (p.json === '' && typeof p.startInput === 'object' && p.startInput !== null && !Array.isArray(p.startInput)) {
    return { arguments: p.startInput as Record<string, unknown> };
  }
  return parseToolArguments(p.json);
}

function finishOf(reason: StopReason): 'stop' | 'tool_calls' | 'length' | 'other' {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    default:
      return 'other';
  }
}
