import test from 'ava';
import { runTurn, type ChatEvent, type TurnInput } from '../../src/agents/chat/chatTurn.ts';
import type { AgentToolset } from '../../src/agents/tools/agentToolset.ts';
import type { ChatMessage, ChatProvider, ChatRequest, StreamEvent, ToolCallRequest } from '../../src/llm/provider.ts';

// The turn loop on its own, with a scripted model and a toolset that counts what it runs.

/** A model that answers each request with the next scripted list of tool calls (none: a text answer). */
function scriptedModel(answers: ToolCallRequest[][]): ChatProvider & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    name: 'scripted',
    requests,
    async *stream(request: ChatRequest): AsyncIterable<StreamEvent> {
      requests.push({ ...request, messages: [...request.messages] });
      const calls = answers.shift() ?? [];
      if (calls.length === 0) yield { type: 'text', text: 'Done.' };
      for (const call of calls) yield { type: 'tool_call', call };
      yield { type: 'finish', reason: calls.length ? 'tool_calls' : 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}

function countingToolset(): AgentToolset & { ran: string[] } {
  const ran: string[] = [];
  return {
    ran,
    definitions: [{ name: 'write', description: 'writes', inputSchema: { type: 'object' } }],
    async run(call) {
      ran.push(call.id);
      return { result: { path: call.arguments.path, version: 1 }, isError: false, versions: [{ path: String(call.arguments.path), version: 1 }] };
    },
  };
}

const writes = (n: number, prefix = 'w'): ToolCallRequest[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, name: 'write', arguments: { path: `docs/${prefix}${i}.md`, content: 'x' } }));

function turn(provider: ChatProvider, toolset: AgentToolset, over: Partial<TurnInput> = {}) {
  const events: ChatEvent[] = [];
  const recorded: ChatMessage[] = [];
  const input: TurnInput = {
    provider,
    model: 'm',
    system: 's',
    maxToolRounds: 20,
    maxToolCallsPerRound: 20,
    history: [],
    message: 'go',
    toolset,
    signal: new AbortController().signal,
    record: async (m) => void recorded.push(m),
    ...over,
  };
  return runTurn(input, (e) => void events.push(e)).then((outcome) => ({ outcome, events, recorded }));
}

test('one model answer asking for 3,000 writes runs only the first max_tool_calls_per_round; the rest are told they were not run', async (t) => {
  const model = scriptedModel([writes(3000), []]);
  const toolset = countingToolset();
  const { outcome, events, recorded } = await turn(model, toolset, { maxToolCallsPerRound: 20 });

  t.deepEqual(toolset.ran, writes(20).map((c) => c.id), 'only the first 20 ran, in order');
  t.is(outcome.status, 'succeeded', 'the turn goes on: the model is told and answers');
  t.is(outcome.toolCalls.length, 20);
  t.is(outcome.versionsWritten.length, 20);

  // Every call has a result in the session (the providers require one), the refused ones an error saying why.
  const results = recorded.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
  t.is(results.length, 3000);
  t.true(results.slice(0, 20).every((r) => !r.isError));
  const refused = results.slice(20);
  t.true(refused.every((r) => r.isError));
  const error = JSON.parse(refused[0]!.content).error;
  t.is(error.code, 'too_many_tool_calls');
  t.regex(error.message, /Not run.*3000 tool calls.*at most 20 .*max_tool_calls_per_round/);

  // The model's next request carries all 3000 results; the client sees each refused call's result too.
  const fed = model.requests[1]!.messages.filter((m) => m.role === 'tool');
  t.is(fed.length, 3000);
  const shown = events.filter((e): e is Extract<ChatEvent, { type: 'tool_result' }> => e.type === 'tool_result');
  t.is(shown.length, 3000);
  t.like(shown[2999], { id: 'w2999', is_error: true, content: { error: { code: 'too_many_tool_calls' } } });
});

test('the cap is per model answer: the next answer may make its calls again', async (t) => {
  const model = scriptedModel([writes(3, 'a'), writes(3, 'b'), []]);
  const toolset = countingToolset();
  const { outcome } = await turn(model, toolset, { maxToolCallsPerRound: 2 });
  t.deepEqual(toolset.ran, ['a0', 'a1', 'b0', 'b1']);
  t.is(outcome.status, 'succeeded');
});
