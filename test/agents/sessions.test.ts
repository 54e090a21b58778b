import test from 'ava';
import { sql } from 'kysely';
import type { ChatMessage } from '../../src/llm/provider.ts';
import { UNANSWERED_CALL } from '../../src/agents/sessions/conversation.ts';
import { metadataCount } from '../helpers/metadata.ts';
import { createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember, createAgent, documented, fieldsOf, type CreatedAgent } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let agent: CreatedAgent;
let check: ReturnType<typeof documented>;

test.before(async () => {
  server = await startTestServer();
  check = documented(server);
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  agent = await createAgent(server, token, projectId, { name: 'chatty' });
});
test.after.always(async () => server?.stop());

const newSession = async (tok: string, body: Record<string, unknown> = {}) => {
  const res = await server.api('POST', '/chat/sessions', { token: tok, body: { agent_id: agent.id, ...body } });
  if (res.status !== 201) throw new Error(`session create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; title: string; created_by: string };
};

test('create, read, rename, list by agent and by project, delete', async (t) => {
  const res = await server.api('POST', '/chat/sessions', { token, body: { agent_id: agent.id, title: '  Planning  ' } });
  t.is(res.status, 201);
  check(t, 'post', '/chat/sessions', res);
  const s = res.body.data;
  t.like(s, { agent_id: agent.id, project_id: projectId, title: 'Planning' });
  t.is((await newSession(token)).title, '', 'no title: empty');

  check(t, 'get', '/chat/sessions/{session_id}', await server.api('GET', `/chat/sessions/${s.id}`, { token }));
  const renamed = await server.api('PATCH', `/chat/sessions/${s.id}`, { token, body: { title: 'Roadmap' } });
  check(t, 'patch', '/chat/sessions/{session_id}', renamed);
  t.is(renamed.body.data.title, 'Roadmap');
  const byAgent = await server.api('GET', `/chat/sessions?agent_id=${agent.id}`, { token });
  check(t, 'get', '/chat/sessions', byAgent);
  const byProject = await server.api('GET', `/chat/sessions?project_id=${projectId}&limit=100`, { token });
  for (const list of [byAgent, byProject]) t.true(list.body.data.sessions.some((x: { id: string }) => x.id === s.id));

  const neither = await server.api('GET', '/chat/sessions', { token });
  t.is(neither.status, 422);
  t.deepEqual(fieldsOf(neither), ['agent_id']);
  t.deepEqual(fieldsOf(await server.api('POST', '/chat/sessions', { token, body: { agent_id: agent.id, model: 'x' } })), ['body'], 'unknown fields are refused');
  t.is((await server.api('POST', '/chat/sessions', { token, body: { agent_id: 'con_nope' } })).status, 404);

  const del = await server.api('DELETE', `/chat/sessions/${s.id}`, { token });
  check(t, 'delete', '/chat/sessions/{session_id}', del);
  t.is((await server.api('GET', `/chat/sessions/${s.id}`, { token })).status, 404);
});

test('a session is seen by whoever started it and by project admins; other members and outsiders get 404', async (t) => {
  const editor = await addMember(server, token, projectId, 'chat-editor', 'editor');
  const viewer = await addMember(server, token, projectId, 'chat-viewer', 'viewer');
  const outsider = await server.createUser(`chat-outsider-${process.pid}@example.com`);
  const mine = await newSession(editor.token, { title: 'editor only' });
  t.is(mine.created_by, editor.id);
  const viewers = await newSession(viewer.token, { title: 'viewers chat too' });

  for (const [method, path, body] of [
    ['GET', `/chat/sessions/${mine.id}`, undefined],
    ['PATCH', `/chat/sessions/${mine.id}`, { title: 'stolen' }],
    ['GET', `/chat/sessions/${mine.id}/messages`, undefined],
    ['DELETE', `/chat/sessions/${mine.id}`, undefined],
  ] as const) {
    t.is((await server.api(method, path, { token: viewer.token, body })).status, 404, `viewer ${method} ${path}`);
    t.is((await server.api(method, path, { token: outsider.token, body })).status, 404, `outsider ${method} ${path}`);
  }
  t.is((await server.api('POST', '/chat/sessions', { token: outsider.token, body: { agent_id: agent.id } })).status, 404);
  t.is((await server.api('GET', `/chat/sessions?project_id=${projectId}`, { token: outsider.token })).status, 404);

  const viewerList = await server.api('GET', `/chat/sessions?project_id=${projectId}&limit=200`, { token: viewer.token });
  t.deepEqual(viewerList.body.data.sessions.map((x: { id: string }) => x.id), [viewers.id], 'a member lists only their own');
  const adminList = await server.api('GET', `/chat/sessions?agent_id=${agent.id}&limit=200`, { token });
  const adminSees = adminList.body.data.sessions.map((x: { id: string }) => x.id);
  t.true(adminSees.includes(mine.id) && adminSees.includes(viewers.id), 'an admin lists everyone’s');
  t.is((await server.api('GET', `/chat/sessions/${mine.id}`, { token })).status, 200);
  t.is((await server.api('GET', `/chat/sessions/${mine.id}`, { token: editor.token })).status, 200);
  t.is((await server.api('DELETE', `/chat/sessions/${mine.id}`, { token })).status, 200, 'an admin deletes others’');
  t.is(await server.services.agents.sessionStore.find(mine.id), null);
  t.truthy(await server.services.agents.sessionStore.find(viewers.id), 'the untouched one stays');
});

test("an agent's own key starts and lists its own sessions; not another agent's", async (t) => {
  const other = await createAgent(server, token, projectId, { name: 'other' });
  const own = await server.api('POST', '/chat/sessions', { token: agent.key, body: { agent_id: agent.id } });
  t.is(own.status, 201);
  t.is(own.body.data.created_by, agent.id);
  t.is((await server.api('POST', '/chat/sessions', { token: agent.key, body: { agent_id: other.id } })).status, 404);
  const byProject = await server.api('GET', `/chat/sessions?project_id=${projectId}`, { token: agent.key });
  t.deepEqual(byProject.body.data.sessions.map((x: { id: string }) => x.id), [own.body.data.id]);
  const adminSession = await newSession(token);
  t.is((await server.api('GET', `/chat/sessions/${adminSession.id}`, { token: agent.key })).status, 404, "the admin's session is not the key's");
  t.is((await server.api('GET', `/chat/sessions?agent_id=${other.id}`, { token: agent.key })).status, 404);
});

const conversation: ChatMessage[] = [
  { role: 'user', content: 'What is in docs?' },
  { role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'ls', arguments: { path: 'docs' } }, { id: 'call_2', name: 'cat', arguments: { path: 'docs/a.md' } }] },
  { role: 'tool', toolCallId: 'call_1', name: 'ls', content: '[a.md]', isError: false },
  { role: 'tool', toolCallId: 'call_2', name: 'cat', content: 'not found', isError: true },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_3', name: 'write', arguments: {}, argumentsError: 'not JSON' }] },
  { role: 'tool', toolCallId: 'call_3', name: 'write', content: 'bad arguments', isError: true },
  { role: 'assistant', content: 'docs holds a.md.', toolCalls: [] },
];

test('messages: stored one row per text, call and result, paginated in order; history rebuilds the provider conversation', async (t) => {
  const session = await newSession(token);
  const { messages, executions } = server.services.agents;
  const exe = await executions.start({ agentId: agent.id, sessionId: session.id, model: 'openai:gpt-4.1-mini' });
  const stored = await messages.append(session.id, conversation, exe);
  t.deepEqual(stored.map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'tool_call', 'tool_call', 'tool_result', 'tool_result', 'tool_call', 'tool_result', 'assistant']);
  t.deepEqual(await messages.history(session.id), conversation, 'the conversation round-trips');

  const pages: number[][] = [];
  let after = 0;
  for (let i = 0; i < 10; i++) {
    const res = await server.api('GET', `/chat/sessions/${session.id}/messages?limit=4&after_seq=${after}`, { token });
    check(t, 'get', '/chat/sessions/{session_id}/messages', res);
    pages.push(res.body.data.messages.map((m: { seq: number }) => m.seq));
    if (res.body.data.next_after_seq === null) break;
    after = res.body.data.next_after_seq;
  }
  t.deepEqual(pages, [[1, 2, 3, 4], [5, 6, 7, 8], [9]]);
  const first = (await server.api('GET', `/chat/sessions/${session.id}/messages?limit=3`, { token })).body.data.messages;
  t.like(first[0], { role: 'user', content: { text: 'What is in docs?' }, execution_id: exe });
  t.like(first[2], { role: 'tool_call', content: { id: 'call_1', name: 'ls', arguments: { path: 'docs' } } });
  t.deepEqual(fieldsOf(await server.api('GET', `/chat/sessions/${session.id}/messages?after_seq=-1`, { token })), ['after_seq']);

  // A later turn continues the numbering.
  t.deepEqual((await messages.append(session.id, [{ role: 'user', content: 'thanks' }])).map((m) => m.seq), [10]);
  t.is((await messages.append(session.id, [])).length, 0);
  await t.throwsAsync(messages.append('chat_nope', [{ role: 'user', content: 'x' }]), { message: /Chat session not found/ });
});

test('history answers tool calls a cut-short turn left without results, and drops orphan results', async (t) => {
  const session = await newSession(token);
  const { messages } = server.services.agents;
  await messages.append(session.id, [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'ls', arguments: {} }, { id: 'b', name: 'cat', arguments: { path: 'x' } }] },
    { role: 'tool', toolCallId: 'a', name: 'ls', content: 'ok', isError: false },
  ]);
  await messages.append(session.id, [{ role: 'tool', toolCallId: 'zzz', name: 'ls', content: 'stray', isError: false }, { role: 'user', content: 'again' }]);
  t.deepEqual(await messages.history(session.id), [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'ls', arguments: {} }, { id: 'b', name: 'cat', arguments: { path: 'x' } }] },
    { role: 'tool', toolCallId: 'a', name: 'ls', content: 'ok', isError: false },
    { role: 'tool', toolCallId: 'b', name: 'cat', content: UNANSWERED_CALL, isError: true },
    { role: 'user', content: 'again' },
  ]);
});

test('deleting a session deletes its messages and keeps its executions; deleting the project removes its sessions', async (t) => {
  const session = await newSession(token);
  const { messages, executions } = server.services.agents;
  const exe = await executions.start({ agentId: agent.id, sessionId: session.id, model: 'openai:gpt-4.1-mini' });
  await messages.append(session.id, [{ role: 'user', content: 'hi' }], exe);
  await server.api('DELETE', `/chat/sessions/${session.id}`, { token });
  t.is(await metadataCount(server, sql`SELECT COUNT(*) AS n FROM chat_messages WHERE session_id = ${session.id}`), 0);
  t.like(await executions.find(exe), { session_id: null, agent_id: agent.id });

  const pid = await createProject(server, token, orgId, 'short-lived');
  const doomed = await createAgent(server, token, pid, { name: 'doomed' });
  const s2 = (await server.api('POST', '/chat/sessions', { token, body: { agent_id: doomed.id } })).body.data;
  await messages.append(s2.id, [{ role: 'user', content: 'bye' }]);
  t.is((await server.api('DELETE', `/projects/${pid}`, { token })).status, 200);
  t.is(await metadataCount(server, sql`SELECT COUNT(*) AS n FROM chat_sessions WHERE project_id = ${pid}`), 0);
  t.is(await metadataCount(server, sql`SELECT COUNT(*) AS n FROM chat_messages WHERE session_id = ${s2.id}`), 0);
  t.is(await server.services.connections.find(doomed.id), undefined);
});
