import test from 'ava';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember, createAgent, documented, type CreatedAgent } from './helpers.ts';

// Who sees what an execution did: its tool-call arguments are the chat's (as private as its
// session); everyone else who may read the agent gets the summary.
let server: TestServer;
let token: string;
let projectId: string;
let agent: CreatedAgent;
let check: ReturnType<typeof documented>;

test.before(async () => {
  server = await startTestServer();
  check = documented(server);
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  agent = await createAgent(server, token, projectId, { name: 'private-runs' });
});
test.after.always(async () => server?.stop());

/** A finished turn in a session started by `tok`, with a bash call whose arguments are the chat's own. */
async function turnBy(tok: string, command: string) {
  const session = await server.api('POST', '/chat/sessions', { token: tok, body: { agent_id: agent.id } });
  if (session.status !== 201) throw new Error(`session: ${session.status} ${JSON.stringify(session.body)}`);
  const { executions } = server.services.agents;
  const id = await executions.start({ agentId: agent.id, sessionId: session.body.data.id, model: 'openai:gpt-4.1-mini' });
  await executions.finish(id, {
    status: 'failed',
    inputTokens: 30,
    outputTokens: 5,
    toolCalls: [{ name: 'bash', arguments: { command }, ok: true, duration_ms: 12 }],
    versionsWritten: [{ path: 'docs/a.md', version: 2 }],
    error: { code: 'provider_bad_request', message: `the provider refused: ${command}` },
  });
  return { id, sessionId: session.body.data.id as string };
}

async function seenBy(tok: string, executionId: string) {
  const res = await server.api('GET', `/agent-config/${agent.id}/executions?limit=100`, { token: tok });
  if (res.status !== 200) throw new Error(`executions: ${res.status} ${JSON.stringify(res.body)}`);
  return { res, execution: res.body.data.executions.find((e: { id: string }) => e.id === executionId) };
}

test("tool-call arguments are shown to the chat's creator and the project's admins; other readers see the summary", async (t) => {
  const creator = await addMember(server, token, projectId, 'exec-creator', 'viewer');
  const editor = await addMember(server, token, projectId, 'exec-editor', 'editor');
  const { id } = await turnBy(creator.token, 'cat ~/.secret-plan');

  for (const [who, tok] of [['the creator', creator.token], ['an admin', token]] as const) {
    const { res, execution } = await seenBy(tok, id);
    check(t, 'get', '/agent-config/{agent_id}/executions', res);
    t.like(execution, { details: 'full', status: 'failed', error: { code: 'provider_bad_request' } }, who);
    t.deepEqual(execution.tool_calls, [{ name: 'bash', arguments: { command: 'cat ~/.secret-plan' }, ok: true, duration_ms: 12 }], who);
    t.regex(execution.error.message, /secret-plan/, who);
  }

  for (const [who, tok] of [['another member', editor.token], ["the agent's own key", agent.key]] as const) {
    const { res, execution } = await seenBy(tok, id);
    check(t, 'get', '/agent-config/{agent_id}/executions', res);
    t.false(JSON.stringify(res.body).includes('secret-plan'), `${who} sees nothing of the arguments`);
    // The summary: status, counts, timings.
    t.like(execution, { details: 'summary', status: 'failed', model: 'openai:gpt-4.1-mini', input_tokens: 30, output_tokens: 5, error: { code: 'provider_bad_request' } }, who);
    t.truthy(execution.started_at && execution.finished_at, who);
    t.deepEqual(execution.tool_calls, [{ name: 'bash', ok: true, duration_ms: 12 }], who);
    t.deepEqual(execution.versions_written, [{ path: 'docs/a.md', version: 2 }], `${who}: versions are in the project's history anyway`);
  }
});

test("a turn the agent's key chatted is its key's; once its chat is deleted, only admins see the details", async (t) => {
  const own = await turnBy(agent.key, 'ls -la');
  t.like((await seenBy(agent.key, own.id)).execution, { details: 'full', tool_calls: [{ arguments: { command: 'ls -la' } }] });
  const viewer = await addMember(server, token, projectId, 'exec-other', 'viewer');
  t.like((await seenBy(viewer.token, own.id)).execution, { details: 'summary' });

  const creator = await addMember(server, token, projectId, 'exec-deleter', 'editor');
  const gone = await turnBy(creator.token, 'rm -rf drafts');
  t.is((await server.api('DELETE', `/chat/sessions/${gone.sessionId}`, { token: creator.token })).status, 200);
  t.like((await seenBy(creator.token, gone.id)).execution, { session_id: null, details: 'summary' });
  t.like((await seenBy(token, gone.id)).execution, { session_id: null, details: 'full', tool_calls: [{ arguments: { command: 'rm -rf drafts' } }] });
});
