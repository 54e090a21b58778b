import { ProviderError, type ChatMessage, type ChatProvider, type ToolCallRequest } from '../../llm/provider.ts';
import type { AgentToolset } from '../tools/agentToolset.ts';
import { abbreviated, forModel } from './toolResultText.ts';

/** What the client of `POST /agents` sees, in order (section 6); `done` is added by the route. */
export type ChatEvent =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'tool_result'; id: string; name: string; content: unknown; is_error: boolean; truncated?: boolean }
  | { type: 'error'; code: string; message: string; retry_after_ms?: number };

export interface TurnInput {
  provider: ChatProvider;
  model: string;
  system: string;
  temperature?: number;
  maxToolRounds: number;
  /** Tool calls of one model answer that are run; the calls past it get a "not run" error result. */
  maxToolCallsPerRound: number;
  /** The session so far, without the new message. */
  history: ChatMessage[];
  message: string;
  toolset: AgentToolset;
  /** Aborted when the client goes away: the upstream request stops and the turn is cancelled. */
  signal: AbortSignal;
  /** Keeps each message of the turn as soon as it is complete (the user's first). */
  record(message: ChatMessage): Promise<void>;
}

export interface ToolCallRecord {
  name: string;
  arguments: Record<string, unknown>;
  ok: boolean;
  duration_ms: number;
}

export interface TurnOutcome {
  status: 'succeeded' | 'failed' | 'cancelled';
  usage: { input_tokens: number; output_tokens: number };
  toolCalls: ToolCallRecord[];
  versionsWritten: { path: string; version: number }[];
  error: { code: string; message: string } | null;
}

/**
 * One chat turn: the model answers the session plus the new message, with the agent's tools;
 * each tool call it makes runs (as the agent) and its result goes back to the model, for up to
 * `maxToolRounds` rounds of at most `maxToolCallsPerRound` calls each (one answer could ask for
 * thousands: the calls past the cap are not run, and their results tell the model so). Text is
 * emitted as it arrives. Every tool call the model made gets a result in the session, run or
 * not, so the next turn's history is one the providers accept.
 */
export async function runTurn(input: TurnInput, emit: (event: ChatEvent) => void): Promise<TurnOutcome> {
  const messages: ChatMessage[] = [...input.history];
  const keep = async (m: ChatMessage) => {
    messages.push(m);
    await input.record(m);
  };
  const outcome: TurnOutcome = { status: 'succeeded', usage: { input_tokens: 0, output_tokens: 0 }, toolCalls: [], versionsWritten: [], error: null };
  const fail = (status: 'failed' | 'cancelled', code: string, message: string, extra: { retry_after_ms?: number } = {}) => {
    outcome.status = status;
    outcome.error = { code, message };
    if (status === 'failed') emit({ type: 'error', code, message, ...extra });
    return outcome;
  };
  await keep({ role: 'user', content: input.message });

  for (let round = 0; ; round++) {
    let text = '';
    const calls: ToolCallRequest[] = [];
    try {
      const stream = input.provider.stream({
        model: input.model,
        system: input.system,
        messages,
        tools: input.toolset.definitions,
        temperature: input.temperature,
        signal: input.signal,
      });
      for await (const event of stream) {
        if (event.type === 'text') {
          text += event.text;
          emit({ type: 'text', content: event.text });
        } else if (event.type === 'tool_call') {
          calls.push(event.call);
          emit({ type: 'tool_call', id: event.call.id, name: event.call.name, arguments: event.call.arguments });
        } else {
          outcome.usage.input_tokens += event.usage.inputTokens;
          outcome.usage.output_tokens += event.usage.outputTokens;
        }
      }
    } catch (err) {
      // What the model said before the failure stays in the session; its unfinished tool calls do not.
      if (text) await keep({ role: 'assistant', content: text, toolCalls: [] });
      if (input.signal.aborted) return fail('cancelled', 'cancelled', 'The client disconnected; the turn was cancelled.');
      if (err instanceof ProviderError) {
        return fail('failed', `provider_${err.kind}`, err.message, err.retryAfterMs !== null ? { retry_after_ms: err.retryAfterMs } : {});
      }
      throw err;
    }
    await keep({ role: 'assistant', content: text, toolCalls: calls });
    if (calls.length === 0) return outcome;

    const overLimit = round >= input.maxToolRounds;
    for (const [index, call] of calls.entries()) {
      const skip = overLimit ? `Not run: this turn reached its limit of ${input.maxToolRounds} tool rounds.` : input.signal.aborted ? 'Not run: the turn was cancelled.' : null;
      if (skip) {
        await keep({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify({ error: { code: 'not_run', message: skip } }), isError: true });
        continue;
      }
      if (index >= input.maxToolCallsPerRound) {
        const refusal = { error: { code: 'too_many_tool_calls', message: tooManyCalls(calls.length, input.maxToolCallsPerRound) } };
        await keep({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify(refusal), isError: true });
        emit({ type: 'tool_result', id: call.id, name: call.name, content: refusal, is_error: true });
        continue;
      }
      const started = performance.now();
      const result = await input.toolset.run(call);
      outcome.toolCalls.push({ name: call.name, arguments: abbreviated(call.arguments) as Record<string, unknown>, ok: !result.isError, duration_ms: Math.round(performance.now() - started) });
      outcome.versionsWritten.push(...result.versions);
      const shown = forModel(result.result);
      await keep({ role: 'tool', toolCallId: call.id, name: call.name, content: shown.text, isError: result.isError });
      emit({ type: 'tool_result', id: call.id, name: call.name, content: shown.truncated ? shown.text : result.result, is_error: result.isError, ...(shown.truncated ? { truncated: true } : {}) });
    }
    if (input.signal.aborted) return fail('cancelled', 'cancelled', 'The client disconnected; the turn was cancelled.');
    if (overLimit) return fail('failed', 'max_tool_rounds', `The agent asked for more tools after ${input.maxToolRounds} tool rounds (max_tool_rounds); the turn stopped.`);
  }
}

/** What a call past the per-answer cap is told, so that the model can ask again in smaller steps. */
function tooManyCalls(asked: number, max: number): string {
  return `Not run: this answer asked for ${asked} tool calls, and at most ${max} are run per answer (max_tool_calls_per_round); the first ${max} ran. Ask for the rest in your next answer, at most ${max} at a time.`;
}
