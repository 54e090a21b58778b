import test, { type ExecutionContext } from 'ava';
import { AnthropicProvider } from '../../src/llm/anthropicProvider.ts';
import { formatModelRef, parseModelRef } from '../../src/llm/modelRef.ts';
import { OpenAiProvider } from '../../src/llm/openaiProvider.ts';
import { ProviderError, type ChatMessage, type ChatProvider, type ChatRequest, type StreamEvent, type ToolDefinition } from '../../src/llm/provider.ts';
import { ChatProviders, InvalidModelRef, ProviderNotConfigured, type LlmSettings } from '../../src/llm/providers.ts';
import { startFakeAnthropic, startFakeOpenAi, type FakeProvider } from './fakeProviders.ts';

const KEY = 'sk-test-0123456789abcdef';

interface Adapter {
  start(): Promise<FakeProvider>;
  make(url: string, o?: { timeoutMs?: number }): ChatProvider;
  /** The provider's own reasons for a truncated reply. */
  lengthReason: string;
}

const adapters: Record<string, Adapter> = {
  openai: {
    start: startFakeOpenAi,
    make: (url, o) => new OpenAiProvider({ name: 'openai', apiKey: KEY, baseURL: url, ...o }),
    lengthReason: 'length',
  },
  anthropic: {
    start: startFakeAnthropic,
    make: (url, o) => new AnthropicProvider({ apiKey: KEY, baseURL: url, ...o }),
    lengthReason: 'max_tokens',
  },
};

async function fake(t: ExecutionContext, start: () => Promise<FakeProvider>): Promise<FakeProvider> {
  const f = await start();
  t.teardown(() => f.close());
  return f;
}

function chat(over: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'm-1', system: 'You are terse.', messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: new AbortController().signal, ...over };
}

async function collect(stream: AsyncIterable<StreamEvent>, onEvent: (e: StreamEvent) => void = () => {}): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) {
    events.push(e);
    onEvent(e);
  }
  return events;
}

/** Collects until the stream fails, and returns the events seen and the error. */
async function failure(stream: AsyncIterable<StreamEvent>, onEvent: (e: StreamEvent) => void = () => {}): Promise<{ events: StreamEvent[]; error: ProviderError }> {
  const events: StreamEvent[] = [];
  try {
    for await (const e of stream) {
      events.push(e);
      onEvent(e);
    }
  } catch (error) {
    if (error instanceof ProviderError) return { events, error };
    throw error;
  }
  throw new Error(`the stream did not fail: ${JSON.stringify(events)}`);
}

/**
 * A caller's signal that gives up after 60 s, so that a broken adapter fails a test instead of
 * hanging it; far from any figure tested, so that a busy machine never trips it.
 */
function safety(extra?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(60_000);
  return extra ? AbortSignal.any([extra, timeout]) : timeout;
}

/** A promise settling with `value` after `ms`, not keeping the process alive. */
function deadline<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(resolve, ms, value).unref());
}

const listTool: ToolDefinition = {
  name: 'list',
  description: 'List a folder',
  inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'folder path' } }, required: ['path'], additionalProperties: false },
};

for (const [name, a] of Object.entries(adapters)) {
  test(`${name}: text streams piece by piece as it arrives, then finish with the usage`, async (t) => {
    const f = await fake(t, a.start);
    let sawText!: () => void;
    const seen = new Promise<string>((resolve) => (sawText = () => resolve('client saw text')));
    // The fake holds the rest of the reply until the adapter has yielded the first piece.
    const resume = Promise.race([seen, deadline(60_000, 'deadline')]);
    f.script({ text: ['Hel', 'lo', ' there'], pauseAfter: 1, resume, usage: { input: 21, output: 3 } });
    const events = await collect(a.make(f.url).stream(chat()), (e) => e.type === 'text' && sawText());
    t.is(await resume, 'client saw text');
    t.deepEqual(events, [
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: ' there' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 21, outputTokens: 3 } },
    ]);
    t.is(f.requests.length, 1);
    t.false('tools' in f.requests[0]!.body, 'no tools field when there are no tools');
    t.is(f.requests[0]!.body.stream, true);
  });

  test(`${name}: a tool call whose arguments arrive in pieces comes whole, parsed`, async (t) => {
    const f = await fake(t, a.start);
    const args = { path: 'docs/a.md', depth: 2, filter: { kinds: ['markdown', 'json'], text: 'a "quoted" word' } };
    f.script({ toolCalls: [{ id: 'call_77', name: 'read', arguments: args }] });
    const events = await collect(a.make(f.url).stream(chat({ tools: [listTool] })));
    t.deepEqual(events, [
      { type: 'tool_call', call: { id: 'call_77', name: 'read', arguments: args } },
      { type: 'finish', reason: 'tool_calls', usage: { inputTokens: 11, outputTokens: 7 } },
    ]);
  });

  test(`${name}: text and two parallel tool calls, in order`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['Let me ', 'look.'], toolCalls: [{ id: 'c1', name: 'list', arguments: { path: 'docs' } }, { id: 'c2', name: 'list', arguments: { path: 'notes' } }] });
    const events = await collect(a.make(f.url).stream(chat({ tools: [listTool] })));
    t.deepEqual(
      events.map((e) => (e.type === 'tool_call' ? `${e.call.id}:${JSON.stringify(e.call.arguments)}` : e.type === 'text' ? e.text : e.reason)),
      ['Let me ', 'look.', 'c1:{"path":"docs"}', 'c2:{"path":"notes"}', 'tool_calls'],
    );
  });

  test(`${name}: arguments that are not a JSON object become {} plus argumentsError`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ toolCalls: [{ id: 'bad', name: 'list', arguments: '{"path": "docs' }, { id: 'arr', name: 'list', arguments: '[1, 2]' }, { id: 'none', name: 'list', arguments: '' }] });
    const calls = (await collect(a.make(f.url).stream(chat({ tools: [listTool] })))).flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
    t.is(calls.length, 3);
    t.deepEqual(calls[0]!.arguments, {});
    t.regex(calls[0]!.argumentsError ?? '', /not valid JSON/);
    t.deepEqual(calls[1]!.arguments, {});
    t.regex(calls[1]!.argumentsError ?? '', /must be a JSON object, not an array/);
    t.deepEqual(calls[2], { id: 'none', name: 'list', arguments: {} });
  });

  test(`${name}: a reply cut by the token limit finishes with reason length`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['Once upon'], finishReason: a.lengthReason });
    const events = await collect(a.make(f.url).stream(chat({ maxTokens: 2 })));
    t.deepEqual(events.at(-1), { type: 'finish', reason: 'length', usage: { inputTokens: 11, outputTokens: 7 } });
  });

  test(`${name}: 401, 429 and 500 map to ProviderError kinds, without retries and without the key`, async (t) => {
    const f = await fake(t, a.start);
    const provider = a.make(f.url);
    f.script(
      { status: 401, errorMessage: `Incorrect API key provided: ${KEY}` },
      { status: 429, headers: { 'retry-after': '7' } },
      { status: 500 },
      { status: 400, errorMessage: 'messages: field required' },
    );
    const unauthorized = await failure(provider.stream(chat()));
    t.is(unauthorized.error.kind, 'unauthorized');
    t.is(unauthorized.error.status, 401);
    t.is(unauthorized.error.message, `${name}: 401 Incorrect API key provided: [redacted]`);
    const limited = await failure(provider.stream(chat()));
    t.is(limited.error.kind, 'rate_limited');
    t.is(limited.error.status, 429);
    t.is(limited.error.retryAfterMs, 7000);
    const down = await failure(provider.stream(chat()));
    t.is(down.error.kind, 'unavailable');
    t.is(down.error.status, 500);
    const bad = await failure(provider.stream(chat()));
    t.is(bad.error.kind, 'bad_request');
    t.regex(bad.error.message, /field required/);
    t.is(f.requests.length, 4, 'one request per call: the SDK does not retry');
  });

  test(`${name}: aborting mid-stream ends with kind aborted and closes the upstream connection`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['first', 'never sent'], pauseAfter: 1 });
    const controller = new AbortController();
    const { events, error } = await failure(a.make(f.url).stream(chat({ signal: safety(controller.signal) })), () => controller.abort());
    t.deepEqual(events, [{ type: 'text', text: 'first' }]);
    t.is(error.kind, 'aborted');
    t.deepEqual(await f.requests[0]!.closed, { beforeEnd: true });
  });

  test(`${name}: a consumer that stops reading closes the upstream connection`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['first', 'never sent'], pauseAfter: 1 });
    for await (const e of a.make(f.url).stream(chat({ signal: safety() }))) {
      t.deepEqual(e, { type: 'text', text: 'first' });
      break;
    }
    t.deepEqual(await f.requests[0]!.closed, { beforeEnd: true });
  });

  test(`${name}: a provider slow to answer times out, once`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ silent: true });
    // Long enough for the request to arrive however busy the machine is; the fake never answers.
    const { error } = await failure(a.make(f.url, { timeoutMs: 2000 }).stream(chat({ signal: safety() })));
    t.is(error.kind, 'timeout');
    t.is(f.requests.length, 1);
  });

  test(`${name}: a reply that stalls mid-stream times out and closes the connection`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['first', 'never sent'], pauseAfter: 1 });
    // Long enough for the first piece to arrive however busy the machine is; the rest never comes.
    const { events, error } = await failure(a.make(f.url, { timeoutMs: 2000 }).stream(chat({ signal: safety() })));
    t.deepEqual(events, [{ type: 'text', text: 'first' }]);
    t.is(error.kind, 'timeout');
    t.regex(error.message, /stalled/);
    t.deepEqual(await f.requests[0]!.closed, { beforeEnd: true });
  });

  test(`${name}: a reply that ends without finishing is unavailable, not a silent success`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['half'], finishReason: null });
    const { events, error } = await failure(a.make(f.url).stream(chat()));
    t.deepEqual(events, [{ type: 'text', text: 'half' }]);
    t.is(error.kind, 'unavailable');
    t.regex(error.message, /ended before it finished/);
  });

  test(`${name}: an error inside the stream maps by its type`, async (t) => {
    const f = await fake(t, a.start);
    f.script({ text: ['so far'], streamError: { type: 'overloaded_error', message: 'Overloaded' } }, { streamError: { type: 'rate_limit_error', message: 'slow down' } });
    const provider = a.make(f.url);
    const overloaded = await failure(provider.stream(chat()));
    t.deepEqual(overloaded.events, [{ type: 'text', text: 'so far' }]);
    t.is(overloaded.error.kind, 'unavailable');
    t.regex(overloaded.error.message, new RegExp(`^${name}: .*Overloaded`));
    t.is((await failure(provider.stream(chat()))).error.kind, 'rate_limited');
  });

  test(`${name}: a server that is not there is unavailable`, async (t) => {
    const f = await a.start();
    await f.close();
    const { error } = await failure(a.make(f.url).stream(chat()));
    t.is(error.kind, 'unavailable');
    t.regex(error.message, /cannot connect \(ECONNREFUSED\)/);
  });
}

/** One conversation with every kind of message, for the translation tests. */
const history: ChatMessage[] = [
  { role: 'user', content: 'What is in docs?' },
  {
    role: 'assistant',
    content: 'Let me look.',
    toolCalls: [
      { id: 'c1', name: 'list', arguments: { path: 'docs' } },
      { id: 'c2', name: 'read', arguments: { path: 'docs/a.md' } },
    ],
  },
  { role: 'tool', toolCallId: 'c1', name: 'list', content: '["a.md"]', isError: false },
  { role: 'tool', toolCallId: 'c2', name: 'read', content: 'not found: docs/a.md', isError: true },
  { role: 'assistant', content: '', toolCalls: [{ id: 'c3', name: 'list', arguments: {} }] },
  { role: 'tool', toolCallId: 'c3', name: 'list', content: '[]', isError: false },
  { role: 'assistant', content: 'Nothing there.', toolCalls: [] },
  { role: 'user', content: 'Thanks' },
];

test('openai: the history, system prompt and tools as the API receives them', async (t) => {
  const f = await fake(t, startFakeOpenAi);
  f.script({ text: ['ok'] });
  await collect(adapters.openai!.make(f.url).stream(chat({ model: 'gpt-4.1-mini', system: 'Be brief.', messages: history, tools: [listTool], temperature: 0.2, maxTokens: 100 })));
  const { path, headers, body } = f.requests[0]!;
  t.is(path, '/v1/chat/completions');
  t.is(headers.authorization, `Bearer ${KEY}`);
  t.deepEqual(body, {
    model: 'gpt-4.1-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is in docs?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'list', arguments: '{"path":"docs"}' } },
          { id: 'c2', type: 'function', function: { name: 'read', arguments: '{"path":"docs/a.md"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '["a.md"]' },
      { role: 'tool', tool_call_id: 'c2', content: 'Error: the tool call failed. not found: docs/a.md' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c3', type: 'function', function: { name: 'list', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c3', content: '[]' },
      { role: 'assistant', content: 'Nothing there.' },
      { role: 'user', content: 'Thanks' },
    ],
    tools: [{ type: 'function', function: { name: 'list', description: 'List a folder', parameters: listTool.inputSchema } }],
    temperature: 0.2,
    max_completion_tokens: 100,
    stream: true,
    stream_options: { include_usage: true },
  });
});

test('anthropic: the history, system prompt and tools as the API receives them', async (t) => {
  const f = await fake(t, startFakeAnthropic);
  f.script({ text: ['ok'] });
  await collect(adapters.anthropic!.make(f.url).stream(chat({ model: 'claude-x', system: 'Be brief.', messages: history, tools: [listTool] })));
  const { path, headers, body } = f.requests[0]!;
  t.is(path, '/v1/messages');
  t.true(headers.authorization === `Bearer ${KEY}` || headers['x-api-key'] === KEY);
  t.truthy(headers['anthropic-version']);
  t.deepEqual(body, {
    model: 'claude-x',
    max_tokens: 4096,
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'What is in docs?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'c1', name: 'list', input: { path: 'docs' } },
          { type: 'tool_use', id: 'c2', name: 'read', input: { path: 'docs/a.md' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: '["a.md"]', is_error: false },
          { type: 'tool_result', tool_use_id: 'c2', content: 'not found: docs/a.md', is_error: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c3', name: 'list', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c3', content: '[]', is_error: false }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Nothing there.' }] },
      { role: 'user', content: 'Thanks' },
    ],
    tools: [{ name: 'list', description: 'List a folder', input_schema: listTool.inputSchema }],
    stream: true,
  });
});

test('anthropic: maxTokens is sent; a temperature is refused before any request (the API version rejects it)', async (t) => {
  const f = await fake(t, startFakeAnthropic);
  f.script({ text: ['ok'] });
  const provider = adapters.anthropic!.make(f.url);
  await collect(provider.stream(chat({ maxTokens: 256 })));
  t.is(f.requests[0]!.body.max_tokens, 256);
  const { error } = await failure(provider.stream(chat({ temperature: 0.5 })));
  t.is(error.kind, 'bad_request');
  t.regex(error.message, /temperature/);
  t.is(f.requests.length, 1);
});

test('parseModelRef: provider:model, splitting at the first colon only', (t) => {
  t.deepEqual(parseModelRef('openai:gpt-4.1-mini'), { provider: 'openai', model: 'gpt-4.1-mini' });
  t.deepEqual(parseModelRef('ollama:llama3.1:8b'), { provider: 'ollama', model: 'llama3.1:8b' });
  t.deepEqual(parseModelRef('anthropic:claude-sonnet-5-5'), { provider: 'anthropic', model: 'claude-sonnet-5-5' });
  for (const bad of [':gpt', 'openai:', '', 'Open AI:gpt', 'openai:gpt 4', `openai:${'x'.repeat(300)}`]) {
    const r = parseModelRef(bad, 'openai');
    t.is(typeof r, 'string', bad);
  }
  t.regex(parseModelRef('llama3.1') as string, /provider:model/, 'a bare name of no known family, and no default provider');
});

test('parseModelRef: a bare name takes the provider of its family (claude-*, gpt-*, o1…), else the default provider', (t) => {
  t.deepEqual(parseModelRef('gpt-4.1-mini', 'ollama'), { provider: 'openai', model: 'gpt-4.1-mini' });
  t.deepEqual(parseModelRef('gpt-4.1-mini'), { provider: 'openai', model: 'gpt-4.1-mini' });
  t.deepEqual(parseModelRef('o3-mini', 'anthropic'), { provider: 'openai', model: 'o3-mini' });
  t.deepEqual(parseModelRef('chatgpt-4o-latest', 'anthropic'), { provider: 'openai', model: 'chatgpt-4o-latest' });
  t.deepEqual(parseModelRef('claude-sonnet-4-5', 'openai'), { provider: 'anthropic', model: 'claude-sonnet-4-5' });
  t.deepEqual(parseModelRef('llama3.1', 'ollama'), { provider: 'ollama', model: 'llama3.1' });
  t.deepEqual(parseModelRef('olmo2', 'ollama'), { provider: 'ollama', model: 'olmo2' }, 'o followed by a letter is no OpenAI reasoning model');
  t.regex(parseModelRef('gpt 4', 'openai') as string, /spaces/);
  t.regex(parseModelRef('llama3.1:8b', 'ollama') as string, /provider.*ollama:llama3\.1:8b/, 'a colon still separates the provider: the message says how to name it');
  t.is(formatModelRef({ provider: 'openai', model: 'gpt-4.1' }), 'openai:gpt-4.1');
});

function settings(over: { openai?: LlmSettings['openai']; anthropic?: LlmSettings['anthropic']; defaultModel?: string } = {}): LlmSettings {
  return { openai: over.openai ?? {}, anthropic: over.anthropic ?? {}, defaultModel: over.defaultModel ?? 'openai:gpt-4.1-mini' };
}

test('ChatProviders: an unconfigured provider names the setting to set', (t) => {
  const providers = new ChatProviders(settings());
  const anthropic = t.throws(() => providers.resolve('anthropic:claude-x'), { instanceOf: ProviderNotConfigured });
  t.is(anthropic.setting, 'CNS_ANTHROPIC_API_KEY');
  t.regex(anthropic.message, /CNS_ANTHROPIC_API_KEY/);
  t.is(t.throws(() => providers.resolve('openai:gpt-4.1-mini'), { instanceOf: ProviderNotConfigured }).setting, 'CNS_OPENAI_API_KEY');
  // A key alone does not say where an `ollama:` model is served.
  const keyed = new ChatProviders(settings({ openai: { apiKey: KEY } }));
  t.is(t.throws(() => keyed.resolve('ollama:llama3.1'), { instanceOf: ProviderNotConfigured }).setting, 'CNS_OPENAI_BASE_URL');
  t.throws(() => keyed.resolve('openai:'), { instanceOf: InvalidModelRef });
  // A bare name goes to the default model's provider (openai here) unless its family says otherwise.
  t.deepEqual([keyed.resolve('llama3.1').provider.name, keyed.resolve('llama3.1').model], ['openai', 'llama3.1']);
  t.is(t.throws(() => keyed.resolve('claude-x'), { instanceOf: ProviderNotConfigured }).setting, 'CNS_ANTHROPIC_API_KEY');
  t.is(keyed.resolve('openai:gpt-4.1-mini').model, 'gpt-4.1-mini');
});

test('ChatProviders: other prefixes go to the OpenAI-compatible server, keyless, with max_tokens; instances are cached', async (t) => {
  const f = await fake(t, startFakeOpenAi);
  const providers = new ChatProviders(settings({ openai: { baseUrl: f.url } }));
  const { provider, model } = providers.resolve('ollama:llama3.1:8b');
  t.is(provider.name, 'ollama');
  t.is(model, 'llama3.1:8b');
  t.is(providers.resolve('ollama:qwen3').provider, provider);
  const openai = providers.resolve('openai:gpt-4.1-mini').provider;
  t.is(openai.name, 'openai');
  t.not(openai, provider);
  f.script({ text: ['hi'] });
  const events = await collect(provider.stream(chat({ model, maxTokens: 50 })));
  t.is(events.at(-1)?.type, 'finish');
  const { body, headers } = f.requests[0]!;
  t.is(body.model, 'llama3.1:8b');
  t.is(body.max_tokens, 50);
  t.false('max_completion_tokens' in body);
  t.regex(String(headers.authorization), /^Bearer \S+$/);
});

test('ChatProviders: anthropic with its key and base URL; describe() tells what is configured, without secrets', async (t) => {
  const f = await fake(t, startFakeAnthropic);
  const providers = new ChatProviders(settings({ anthropic: { apiKey: KEY, baseUrl: f.url }, defaultModel: 'anthropic:claude-x' }));
  const { provider, model } = providers.resolve('anthropic:claude-x');
  t.is(provider.name, 'anthropic');
  f.script({ text: ['hi'] });
  await collect(provider.stream(chat({ model })));
  t.is(f.requests[0]!.body.model, 'claude-x');
  const status = providers.describe();
  t.deepEqual(status, {
    defaultModel: 'anthropic:claude-x',
    defaultModelReady: true,
    defaultModelProblem: null,
    openai: { configured: false, customBaseUrl: false },
    anthropic: { configured: true, customBaseUrl: true },
    openaiCompatible: { configured: false },
  });
  t.false(JSON.stringify(status).includes(KEY));
  const unready = new ChatProviders(settings({ defaultModel: 'ollama:llama3.1' })).describe();
  t.false(unready.defaultModelReady);
  t.regex(unready.defaultModelProblem ?? '', /CNS_OPENAI_BASE_URL/);
});
