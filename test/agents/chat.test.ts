import test from 'ava';
import { contentApi, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { chat, eventually, shape, textOf } from './chatClient.ts';
import { startFakeAnthropic, startFakeOpenAi, type FakeProvider, type RecordedRequest } from './fakeProviders.ts';
import { addMember, createAgent, nodeAt } from './helpers.ts';

// Chat through HTTP with both wire formats: the real SDKs reach local servers that speak them.
let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;
const fakes = {} as Record<Flavor, FakeProvider>;
type Flavor = 'openai' | 'anthropic';
const flavors: Flavor[] = ['openai', 'anthropic'];
const modelOf = (f: Flavor) => (f === 'openai' ? 'openai:gpt-test' : 'anthropic:claude-test');

test.before(async () => {
  fakes.openai = await startFakeOpenAi();
  fakes.anthropic = await startFakeAnthropic();
  server = await startTestServer({}, {
    CNS_OPENAI_BASE_URL: fakes.openai.url,
    CNS_OPENAI_API_KEY: 'sk-test-openai',
    CNS_ANTHROPIC_BASE_URL: fakes.anthropic.url,
    CNS_ANTHROPIC_API_KEY: 'sk-test-anthropic',
    CNS_SANDBOX: 'bwrap',
  });
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/a.md', node_type: 'markdown', content: '# Alpha\nThe alpha document.\n' });
  await c('POST', '/write', { path: 'docs/data.json', node_type: 'json', content: { items: [1, 2, 3] } });
  await c('POST', '/write', { path: 'secret/plan.md', node_type: 'markdown', content: 'not for agents' });
});

test.after.always(async () => {
  await server?.stop();
  await Promise.all(Object.values(fakes).map((f) => f.close()));
});

/** An agent of one flavor with read_write on docs (and any extra body). */
async function docsAgent(flavor: Flavor, extra: Record<string, unknown> = {}, mode: 'read' | 'read_write' = 'read_write') {
  const a = await createAgent(server, token, projectId, { name: `docs-${flavor}-${Math.random().toString(36).slice(2, 6)}`, model: modelOf(flavor), system_prompt: 'You keep the docs.', ...extra });
  const r = await server.api('POST', `/agent-config/${a.id}/accesses`, { token, body: { node_id: nodeAt(server, projectId, 'docs'), mode } });
  if (r.status !== 201) throw new Error(`access: ${r.status} ${JSON.stringify(r.body)}`);
  return a;
}

/** The requests of this test only (fakes are shared by the tests of one flavor, which run serially). */
function since(f: Flavor) {
  const start = fakes[f].requests.length;
  return () => fakes[f].requests.slice(start);
}

const systemOf = (f: Flavor, r: RecordedRequest): string =>
  f === 'openai' ? r.body.messages[0].content : typeof r.body.system === 'string' ? r.body.system : r.body.system.map((b: { text: string }) => b.text).join('');
const toolsOf = (f: Flavor, r: RecordedRequest): { name: string; schema: any }[] =>
  (r.body.tools ?? []).map((t: any) => (f === 'openai' ? { name: t.function.name, schema: t.function.parameters } : { name: t.name, schema: t.input_schema }));
/** The tool results a request carries, in order. */
function toolResultsOf(f: Flavor, r: RecordedRequest): { id: string; content: string; isError: boolean }[] {
  if (f === 'openai') return r.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => ({ id: m.tool_call_id, content: m.content, isError: /failed/i.test(m.content.slice(0, 60)) }));
  return r.body.messages
    .filter((m: any) => m.role === 'user' && Array.isArray(m.content))
    .flatMap((m: any) => m.content.filter((b: any) => b.type === 'tool_result'))
    .map((b: any) => ({ id: b.tool_use_id, content: typeof b.content === 'string' ? b.content : b.content.map((x: any) => x.text).join(''), isError: Boolean(b.is_error) }));
}

for (const f of flavors) {
  test.serial(`${f}: a read: text streams, the tool call runs as the agent, its result goes back to the model, done ends the stream`, async (t) => {
    const agent = await docsAgent(f);
    const mine = since(f);
    fakes[f].script({ text: ['Let me ', 'read it.'], toolCalls: [{ name: 'cat', arguments: { path: 'docs/a.md' } }] }, { text: ['The doc ', 'is about alpha.'] });
    const answer = await chat(server, token, { agent_id: agent.id, message: 'What is in docs/a.md?' });
    t.is(answer.status, 200);
    t.regex(answer.contentType!, /^text\/event-stream/);
    t.deepEqual(shape(answer.events), ['text', 'tool_call', 'tool_result', 'text', 'done']);
    t.is(textOf(answer.events), 'Let me read it.The doc is about alpha.');
    const call = answer.events.find((e) => e.type === 'tool_call')!;
    t.like(call, { name: 'cat', arguments: { path: 'docs/a.md' } });
    const result = answer.events.find((e) => e.type === 'tool_result')!;
    t.like(result, { id: call.id, name: 'cat', is_error: false, content: { path: 'docs/a.md', type: 'markdown', content: '# Alpha\nThe alpha document.\n' } });
    const done = answer.events.at(-1)!;
    t.like(done, { type: 'done', status: 'succeeded', usage: { input_tokens: 22, output_tokens: 14 } });

    const [first, second] = mine();
    t.is(systemOf(f, first!), 'You keep the docs.');
    const tools = toolsOf(f, first!);
    t.deepEqual(tools.map((x) => x.name).sort(), ['blame', 'cat', 'grep', 'ls', 'query_json', 'tree', 'write'], 'no search tool without a search index');
    t.is(tools.find((x) => x.name === 'cat')!.schema.type, 'object');
    t.regex(tools.find((x) => x.name === 'cat')!.schema.properties.path.description, /"docs"/);
    const [fed] = toolResultsOf(f, second!);
    t.is(fed!.id, call.id);
    t.false(fed!.isError);
    t.true(fed!.content.includes('The alpha document.'), fed!.content);

    // The turn is kept: session messages in order and the execution record.
    const messages = await server.api('GET', `/chat/sessions/${done.session_id}/messages`, { token });
    t.deepEqual(messages.body.data.messages.map((m: { role: string }) => m.role), ['user', 'assistant', 'tool_call', 'tool_result', 'assistant']);
    const executions = await server.api('GET', `/agent-config/${agent.id}/executions`, { token });
    const [execution] = executions.body.data.executions;
    t.like(execution, { id: done.execution_id, session_id: done.session_id, status: 'succeeded', model: modelOf(f), input_tokens: 22, output_tokens: 14 });
    t.like(execution.tool_calls[0], { name: 'cat', arguments: { path: 'docs/a.md' }, ok: true });
  });

  test.serial(`${f}: blame tells the agent which version, by whom, last changed each line`, async (t) => {
    const agent = await docsAgent(f);
    fakes[f].script({ text: ['Checking. '], toolCalls: [{ name: 'blame', arguments: { path: 'docs/a.md' } }] }, { text: ['A person wrote it.'] });
    const answer = await chat(server, token, { agent_id: agent.id, message: 'Who wrote docs/a.md?' });
    t.is(answer.status, 200);
    const result = answer.events.find((e) => e.type === 'tool_result')!;
    t.like(result, { name: 'blame', is_error: false, content: { path: 'docs/a.md', version: 1 } });
    const content = (result as unknown as { content: { ranges: unknown[]; commits: { actor_type: string; version: number }[] } }).content;
    t.true(content.ranges.length > 0);
    t.like(content.commits[0], { actor_type: 'user', version: 1 });
  });

  test.serial(`${f}: a write becomes a version by the agent; the next turn of the session carries the history`, async (t) => {
    const agent = await docsAgent(f);
    const mine = since(f);
    fakes[f].script({ toolCalls: [{ name: 'write', arguments: { path: 'docs/summary.md', content: `# Summary ${f}`, message: 'add a summary' } }] }, { text: ['Written.'] });
    const first = await chat(server, token, { agent_id: agent.id, message: 'Write a summary.' });
    const done = first.events.at(-1)!;
    t.like(done, { type: 'done', status: 'succeeded' });
    const result = first.events.find((e) => e.type === 'tool_result')!;
    t.like(result.content, { path: 'docs/summary.md', type: 'markdown', changed: true });
    const versions = (await c('GET', `/versions?path=docs/summary.md`)).body.data.versions;
    t.like(versions[0], { actor_type: 'agent', actor_id: agent.id, author: `agent:${agent.agent.name}`, message: 'add a summary' });
    const execution = (await server.api('GET', `/agent-config/${agent.id}/executions`, { token })).body.data.executions[0];
    t.deepEqual(execution.versions_written, [{ path: 'docs/summary.md', version: versions[0].version }]);

    fakes[f].script({ text: ['Still here.'] });
    const second = await chat(server, token, { agent_id: agent.id, message: 'And now?', session_id: done.session_id });
    t.like(second.events.at(-1), { type: 'done', session_id: done.session_id, status: 'succeeded' });
    const replay = mine()[2]!;
    const fed = toolResultsOf(f, replay);
    t.is(fed.length, 1, 'the earlier tool result is in the history');
    t.true(fed[0]!.content.includes('docs/summary.md'));
    const lastUser = f === 'openai' ? replay.body.messages.at(-1).content : replay.body.messages.at(-1).content;
    t.true(JSON.stringify(lastUser).includes('And now?'));
  });

  test.serial(`${f}: a call outside the agent's accesses is refused and the refusal is reported to the model`, async (t) => {
    const agent = await docsAgent(f, {}, 'read');
    const mine = since(f);
    fakes[f].script(
      { toolCalls: [{ name: 'cat', arguments: { path: 'secret/plan.md' } }, { name: 'write', arguments: { path: 'docs/x.md', content: 'x' } }] },
      { text: ['I cannot.'] },
    );
    const answer = await chat(server, token, { agent_id: agent.id, message: 'Read the secret plan and write x.' });
    const results = answer.events.filter((e) => e.type === 'tool_result');
    t.is(results.length, 2);
    t.true(results.every((r) => r.is_error));
    t.regex(results[0]!.content.error.message, /"secret\/plan.md" is outside this agent's accesses\. It may cat beneath: "docs"/);
    t.regex(results[1]!.content.error.message, /no tool "write"/, 'a read-only agent is not offered write');
    t.false(JSON.stringify(answer.events).includes('not for agents'));
    const fed = toolResultsOf(f, mine()[1]!);
    t.is(fed.length, 2);
    t.true(fed.every((r) => r.isError));
    t.regex(fed[0]!.content, /outside this agent's accesses/);
    t.is((await c('GET', '/cat?path=docs/x.md')).status, 404, 'nothing was written');
    t.like(answer.events.at(-1), { type: 'done', status: 'succeeded' });
  });

  test.serial(`${f}: provider 429 and 500 become an error event, a failed execution and done; never a hung stream`, async (t) => {
    const agent = await docsAgent(f);
    fakes[f].script({ status: 429, headers: { 'retry-after': '7' } });
    const limited = await chat(server, token, { agent_id: agent.id, message: 'hi' });
    t.deepEqual(shape(limited.events), ['error', 'done']);
    t.like(limited.events[0], { code: 'provider_rate_limited', retry_after_ms: 7000 });
    t.like(limited.events[1], { status: 'failed' });
    fakes[f].script({ status: 500 });
    const broken = await chat(server, token, { agent_id: agent.id, message: 'hi again' });
    t.like(broken.events[0], { type: 'error', code: 'provider_unavailable' });
    t.false(JSON.stringify(broken.events).includes('sk-test'), 'no key in what the client sees');
    const executions = (await server.api('GET', `/agent-config/${agent.id}/executions`, { token })).body.data.executions;
    t.deepEqual(executions.map((e: { status: string }) => e.status), ['failed', 'failed']);
    t.like(executions[1].error, { code: 'provider_rate_limited' });
  });

  test.serial(`${f}: the client disconnecting mid-stream cancels the upstream request and the turn`, async (t) => {
    const agent = await docsAgent(f);
    const mine = since(f);
    fakes[f].script({ text: ['one ', 'two ', 'three'], pauseAfter: 1 });
    const answer = await chat(server, token, { agent_id: agent.id, message: 'Count.' }, (e) => (e.type === 'text' ? 'disconnect' : undefined));
    t.deepEqual(shape(answer.events), ['text']);
    const upstream = await mine()[0]!.closed;
    t.true(upstream.beforeEnd, 'the request to the provider was aborted before its end');
    const execution = await eventually(async () => {
      const [e] = (await server.api('GET', `/agent-config/${agent.id}/executions`, { token })).body.data.executions;
      return e.status === 'running' ? undefined : e;
    }, 'the execution to end');
    t.is(execution.status, 'cancelled');
  });
}

test.serial('a bash tool edits files in the sandbox and the change is one version by the agent', async (t) => {
  const agent = await docsAgent('openai');
  const bash = await server.api('POST', `/agent-config/${agent.id}/bash`, { token, body: { node_id: nodeAt(server, projectId, 'docs'), mode: 'read_write' } });
  t.is(bash.status, 201, JSON.stringify(bash.body));
  const mine = since('openai');
  fakes.openai.script({ toolCalls: [{ name: 'bash', arguments: { command: "sed -i 's/alpha document/ALPHA DOCUMENT/' a.md && grep -c ALPHA a.md" } }] }, { text: ['Done.'] });
  const answer = await chat(server, token, { agent_id: agent.id, message: 'Shout alpha.' });
  const result = answer.events.find((e) => e.type === 'tool_result')!;
  t.false(result.is_error, JSON.stringify(result));
  t.like(result.content, { exit_code: 0, stdout: '1\n', changes: [{ path: 'docs/a.md', action: 'modified' }] });
  t.regex((await c('GET', '/cat?path=docs/a.md')).body.data.content, /ALPHA DOCUMENT/);
  const [latest] = (await c('GET', '/versions?path=docs/a.md')).body.data.versions;
  t.like(latest, { actor_type: 'agent', actor_id: agent.id });
  const bashTool = toolsOf('openai', mine()[0]!).find((x) => x.name === 'bash')!;
  t.deepEqual(Object.keys(bashTool.schema.properties).sort(), ['command', 'stdin', 'timeout_s']);
});

test.serial('search: offered once the project has a search index, and it finds content inside the accesses only', async (t) => {
  const created = await server.api('POST', '/tools/search', { token, body: { name: 'find', project_id: projectId } });
  t.is(created.status, 202, JSON.stringify(created.body));
  await eventually(async () => {
    const s = await server.api('GET', `/tools/${created.body.data.tool.id}/search-index`, { token });
    return s.body.data?.status === 'ready' ? true : undefined;
  }, 'the index', 30_000);
  const agent = await docsAgent('anthropic');
  const mine = since('anthropic');
  fakes.anthropic.script({ toolCalls: [{ name: 'search', arguments: { query: 'plan alpha' } }] }, { text: ['Found.'] });
  const answer = await chat(server, token, { agent_id: agent.id, message: 'Search.' });
  t.true(toolsOf('anthropic', mine()[0]!).some((x) => x.name === 'search'));
  const result = answer.events.find((e) => e.type === 'tool_result')!;
  t.false(result.is_error, JSON.stringify(result.content));
  const paths = result.content.results.map((r: { path: string }) => r.path);
  t.true(paths.includes('docs/a.md'), JSON.stringify(paths));
  t.false(paths.includes('secret/plan.md'), 'nothing outside the accesses');
});

test.serial('who may chat: members who read the project (a viewer gets no write tool), the agent\'s own key; not outsiders nor other agents\' keys', async (t) => {
  const agent = await docsAgent('openai');
  const other = await docsAgent('openai');
  const viewer = await addMember(server, token, projectId, 'viewer', 'viewer');
  const mine = since('openai');
  fakes.openai.script({ text: ['hello viewer'] }, { text: ['hello key'] });
  const asViewer = await chat(server, viewer.token, { agent_id: agent.id, message: 'hi' });
  t.like(asViewer.events.at(-1), { type: 'done', status: 'succeeded' });
  t.false(toolsOf('openai', mine()[0]!).some((x) => x.name === 'write'), 'a viewer cannot write through an agent');
  const asKey = await chat(server, agent.key, { agent_id: agent.id, message: 'hi' });
  t.like(asKey.events.at(-1), { type: 'done', status: 'succeeded' });
  t.true(toolsOf('openai', mine()[1]!).some((x) => x.name === 'write'));
  const outsider = await server.createUser(`outsider-${Date.now()}@example.com`);
  t.is((await chat(server, outsider.token, { agent_id: agent.id, message: 'hi' })).status, 404);
  t.is((await chat(server, other.key, { agent_id: agent.id, message: 'hi' })).status, 404);
  t.is(mine().length, 2, 'refused chats never reach the model');
  // The agent's key reaches no content on its own: only through its accesses, in a chat.
  t.is((await server.api('GET', `/content/${projectId}/cat?path=docs/a.md`, { token: agent.key })).status, 403);
});

test.serial('refused before the stream: unknown agent 404, paused 403, empty message 422, a session of another agent 422, a busy session 409', async (t) => {
  const agent = await docsAgent('openai');
  t.is((await chat(server, token, { agent_id: 'con_nope', message: 'hi' })).status, 404);
  const empty = await chat(server, token, { agent_id: agent.id, message: '   ' });
  t.is(empty.status, 422);
  t.is((await chat(server, token, { agent_id: agent.id, message: 'hi', stream: false })).status, 422, 'unknown fields are refused');
  const other = await docsAgent('openai');
  const session = await server.api('POST', '/chat/sessions', { token, body: { agent_id: other.id } });
  const foreign = await chat(server, token, { agent_id: agent.id, message: 'hi', session_id: session.body.data.id });
  t.is(foreign.status, 422);
  t.is(foreign.body.error.details[0].field, 'session_id');

  let release!: () => void;
  fakes.openai.script({ text: ['slow ', 'answer'], pauseAfter: 1, resume: new Promise<void>((r) => (release = r)) });
  const own = await server.api('POST', '/chat/sessions', { token, body: { agent_id: agent.id } });
  let busy: Awaited<ReturnType<typeof chat>> | null = null;
  const first = chat(server, token, { agent_id: agent.id, message: 'one', session_id: own.body.data.id }, (e) => {
    if (e.type === 'text' && !busy) {
      void chat(server, token, { agent_id: agent.id, message: 'two', session_id: own.body.data.id }).then((b) => {
        busy = b;
        release();
      });
    }
  });
  const done = await first;
  t.like(done.events.at(-1), { type: 'done', status: 'succeeded' });
  t.is(busy!.status, 409);

  const paused = await server.api('PUT', `/agent-config/${agent.id}`, { token, body: { status: 'paused' } });
  t.is(paused.status, 200, JSON.stringify(paused.body));
  t.is((await chat(server, token, { agent_id: agent.id, message: 'hi' })).status, 403);
});

test.serial('a long tool result is cut for the model with a note; the client is told it was cut', async (t) => {
  await c('POST', '/write', { path: 'docs/long.md', node_type: 'markdown', content: 'word '.repeat(10_000) });
  const agent = await docsAgent('openai');
  const mine = since('openai');
  fakes.openai.script({ toolCalls: [{ name: 'cat', arguments: { path: 'docs/long.md' } }] }, { text: ['Long.'] });
  const answer = await chat(server, token, { agent_id: agent.id, message: 'Read the long one.' });
  const result = answer.events.find((e) => e.type === 'tool_result')!;
  t.truthy(result, JSON.stringify(answer.events));
  t.true(result.truncated);
  t.regex(result.content, /\[truncated: \d+ of \d+ characters left out/);
  const [fed] = toolResultsOf('openai', mine()[1]!);
  t.true(fed!.content.length < 16_500, String(fed!.content.length));
  t.regex(fed!.content, /Ask for less at a time/);
});

test.serial('a tool bound to the agent is offered under its binding name and runs on its own node; the agent status counts chat calls', async (t) => {
  const tool = await server.api('POST', '/tools/', { token, body: { name: 'items', type: 'query_json', node_id: nodeAt(server, projectId, 'docs/data.json'), config: { pointer: '/items' } } });
  t.is(tool.status, 201, JSON.stringify(tool.body));
  const agent = await createAgent(server, token, projectId, { name: `bound-${Date.now()}`, model: 'openai:gpt-test' });
  const bound = await server.api('POST', `/mcp/agents/${agent.id}/tools`, { token, body: { tool_id: tool.body.data.id, name: 'item_list', description: 'The item numbers.' } });
  t.is(bound.status, 201, JSON.stringify(bound.body));
  const mine = since('openai');
  fakes.openai.script({ toolCalls: [{ name: 'item_list', arguments: {} }] }, { text: ['Three items.'] });
  const answer = await chat(server, token, { agent_id: agent.id, message: 'How many items?' });
  const offered = toolsOf('openai', mine()[0]!);
  t.deepEqual(offered.map((x) => x.name), ['item_list'], 'no access: only the bound tool');
  t.regex(JSON.stringify(mine()[0]!.body.tools), /The item numbers\./);
  const result = answer.events.find((e) => e.type === 'tool_result')!;
  t.false(result.is_error, JSON.stringify(result));
  t.deepEqual(result.content.result, [1, 2, 3]);
  const status = await server.api('GET', `/mcp/agents/${agent.id}/status`, { token });
  t.like(status.body.data, { calls_24h: 1, errors_24h: 0 });
});

test.serial('max_tool_rounds: a model that keeps calling tools is stopped, and every call it made has a result', async (t) => {
  const agent = await docsAgent('anthropic', { max_tool_rounds: 1 });
  fakes.anthropic.script({ toolCalls: [{ name: 'ls', arguments: {} }] }, { toolCalls: [{ name: 'ls', arguments: { path: 'docs' } }] });
  const answer = await chat(server, token, { agent_id: agent.id, message: 'Loop.' });
  t.deepEqual(shape(answer.events), ['tool_call', 'tool_result', 'tool_call', 'error', 'done']);
  t.like(answer.events.at(-2), { code: 'max_tool_rounds' });
  t.like(answer.events.at(-1), { status: 'failed' });
  const messages = (await server.api('GET', `/chat/sessions/${answer.events.at(-1)!.session_id}/messages`, { token })).body.data.messages;
  t.deepEqual(messages.map((m: { role: string }) => m.role), ['user', 'tool_call', 'tool_result', 'tool_call', 'tool_result']);
});

test.serial('max_tool_calls_per_round: calls past the cap in one answer are not run, and the model is told so', async (t) => {
  const agent = await docsAgent('openai', { max_tool_calls_per_round: 2 });
  const mine = since('openai');
  const paths = [0, 1, 2, 3].map((i) => `docs/capped-${i}.md`);
  fakes.openai.script({ toolCalls: paths.map((path) => ({ name: 'write', arguments: { path, content: path } })) }, { text: ['Wrote two.'] });
  const answer = await chat(server, token, { agent_id: agent.id, message: 'Write four files.' });
  t.like(answer.events.at(-1), { type: 'done', status: 'succeeded' });
  const results = answer.events.filter((e) => e.type === 'tool_result');
  t.deepEqual(results.map((r) => r.is_error), [false, false, true, true]);
  t.like(results[2], { content: { error: { code: 'too_many_tool_calls' } } });
  for (const [i, path] of paths.entries()) t.is((await c('GET', `/cat?path=${path}`)).status, i < 2 ? 200 : 404, path);
  const fed = toolResultsOf('openai', mine()[1]!);
  t.is(fed.length, 4, 'every call has a result for the model');
  t.regex(fed[3]!.content, /Not run.*at most 2 .*max_tool_calls_per_round/);
  const execution = (await server.api('GET', `/agent-config/${agent.id}/executions`, { token })).body.data.executions[0];
  t.is(execution.tool_calls.length, 2, 'only the calls that ran are recorded');
});

test.serial('with a workspace open, the agent\'s writes and bash edits go to the draft; complete merges them as one version, or 409 on a conflict', async (t) => {
  await c('POST', '/write', { path: 'docs/ws.md', node_type: 'markdown', content: 'one\ntwo\nthree\n' });
  const agent = await docsAgent('anthropic');
  await server.api('POST', `/agent-config/${agent.id}/bash`, { token, body: { node_id: nodeAt(server, projectId, 'docs'), name: 'sh', mode: 'read_write' } });
  const opened = await server.api('POST', '/workspace/create', { token, body: { agent_id: agent.id } });
  t.is(opened.status, 201, JSON.stringify(opened.body));
  const before = server.services.content.projectVersion(projectId);
  fakes.anthropic.script(
    { toolCalls: [{ name: 'write', arguments: { path: 'docs/draft.md', content: '# Draft' } }, { name: 'sh', arguments: { command: "sed -i 's/one/ONE/' ws.md" } }] },
    { toolCalls: [{ name: 'cat', arguments: { path: 'docs/ws.md' } }] },
    { text: ['Drafted.'] },
  );
  const answer = await chat(server, token, { agent_id: agent.id, message: 'Draft it.' });
  t.like(answer.events.at(-1), { type: 'done', status: 'succeeded' });
  const results = answer.events.filter((e) => e.type === 'tool_result');
  t.true(results.every((r) => !r.is_error), JSON.stringify(results));
  t.is(results[2]!.content.content, 'ONE\ntwo\nthree\n', 'the agent reads its draft');
  t.is(server.services.content.projectVersion(projectId), before, 'nothing went live');
  t.is((await c('GET', '/cat?path=docs/draft.md')).status, 404);
  const execution = (await server.api('GET', `/agent-config/${agent.id}/executions`, { token })).body.data.executions[0];
  t.deepEqual(execution.versions_written, [], 'drafts are not versions');

  const status = await server.api('GET', `/workspace/${agent.id}/status`, { token });
  t.deepEqual(status.body.data.changes.map((ch: { path: string }) => ch.path).sort(), ['docs/draft.md', 'docs/ws.md']);
  // A live edit of another line merges cleanly.
  await c('POST', '/write', { path: 'docs/ws.md', node_type: 'markdown', content: 'one\ntwo\nthree, live\n' });
  const done = await server.api('POST', `/workspace/${agent.id}/complete`, { token, body: { message: 'apply the draft' } });
  t.is(done.status, 200, JSON.stringify(done.body));
  t.is(server.services.content.projectVersion(projectId), before + 2, 'the live edit, then ONE commit for the draft');
  t.is((await c('GET', '/cat?path=docs/ws.md')).body.data.content, 'ONE\ntwo\nthree, live\n');
  const [latest] = (await c('GET', '/versions?path=docs/draft.md')).body.data.versions;
  t.like(latest, { actor_type: 'agent', actor_id: agent.id, message: 'apply the draft' });

  // Again, with a live edit of the same line: 409 with the regions, nothing written, the draft kept.
  t.is((await server.api('POST', '/workspace/create', { token, body: { agent_id: agent.id } })).status, 201);
  fakes.anthropic.script({ toolCalls: [{ name: 'write', arguments: { path: 'docs/ws.md', content: 'ONE (agent)\ntwo\nthree, live\n' } }] }, { text: ['ok'] });
  await chat(server, token, { agent_id: agent.id, message: 'Edit line one.' });
  await c('POST', '/write', { path: 'docs/ws.md', node_type: 'markdown', content: 'ONE (person)\ntwo\nthree, live\n' });
  const live = server.services.content.projectVersion(projectId);
  const conflict = await server.api('POST', `/workspace/${agent.id}/complete`, { token, body: {} });
  t.is(conflict.status, 409, JSON.stringify(conflict.body));
  t.true(JSON.stringify(conflict.body.error.details).includes('docs/ws.md'));
  t.is(server.services.content.projectVersion(projectId), live, 'nothing was written');
  t.is((await server.api('GET', `/workspace/${agent.id}/status`, { token })).status, 200, 'the workspace stays');
  t.is((await server.api('DELETE', `/workspace/${agent.id}`, { token })).status, 200);
});

test('a model whose provider is not configured is 503 naming the setting', async (t) => {
  const bare = await startTestServer();
  t.teardown(() => bare.stop());
  const { token: admin } = await bare.login();
  const { projectId: pid } = await defaultProject(bare, admin);
  const agent = await createAgent(bare, admin, pid, { model: 'anthropic:claude-test' });
  const answer = await chat(bare, admin, { agent_id: agent.id, message: 'hi' });
  t.is(answer.status, 503);
  t.like(answer.body.error, { code: 'SERVICE_UNAVAILABLE', details: { setting: 'CNS_ANTHROPIC_API_KEY' } });
});
