import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Principal } from '../../src/auth/principal.ts';
import { ToolCallLog } from '../../src/agents/bindings/callLog.ts';
import { BindingStore } from '../../src/agents/bindings/bindingStore.ts';
import { AgentToolBindings } from '../../src/agents/bindings/toolBindings.ts';
import { AgentAccesses } from '../../src/agents/config/accesses.ts';
import { defaultAccessTools, type AgentAccess } from '../../src/agents/config/agentRecord.ts';
import { Agents } from '../../src/agents/config/agents.ts';
import { AccessStore } from '../../src/agents/config/accessStore.ts';
import { AgentBashTools } from '../../src/agents/config/bashTools.ts';
import { BashToolStore } from '../../src/agents/config/bashToolStore.ts';
import type { NodeInfo } from '../../src/content/types.ts';
import { AccessConnectionStore } from '../../src/domain/connections/accessConnectionStore.ts';
import type { ContentAccess } from '../../src/policies/contentAccess.ts';
import { ExecutionStore, INTERRUPTED } from '../../src/agents/executions/executionStore.ts';
import { MessageStore } from '../../src/agents/sessions/messageStore.ts';
import { SessionStore } from '../../src/agents/sessions/sessionStore.ts';
import { WorkspaceStore } from '../../src/agents/workspaces/workspaceStore.ts';
import { openDatabase } from '../../src/db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { ToolStore } from '../../src/tools/toolStore.ts';
import { ENGINES, metadataOn, type Engine } from '../helpers/metadataEngines.ts';

/** The agents' stores give the same answers on SQLite and PostgreSQL, raced writes included. */

const T0 = '2026-01-01T00:00:00.000Z';

/** An agent id: agents are rows of `connections`, which the agents' tables refer to. */
async function agentOn(engine: Engine, metadata: MetadataStore, id: string): Promise<string> {
  await sql`INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at)
    VALUES (${id}, 'prj_1', 'agent', ${id}, 'read_write', ${`hash-${id}`}, 'cns_', ${T0}, ${T0})`.execute(metadata.db);
  return id;
}

const limits = { timeout_s: 5 };

/** What the agents' services need beside the metadata store, letting every caller reach every node (folders of prj_1). */
const user: Principal = { kind: 'user', id: 'usr_1' } as unknown as Principal;
const reach = {
  content: { findById: (id: string) => ({ id, projectId: 'prj_1', path: id, type: 'folder', state: 'active' }) as NodeInfo },
  access: { node: async () => undefined, grant: async () => ({}), requireWholeProject: () => undefined } as unknown as ContentAccess,
};

for (const engine of ENGINES) {
  test(`${engine}: accesses: one per node (null: the whole project), checked in the transaction that writes; replace keeps ids; raced writes never mix`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new AccessStore(metadata);
    const agent = await agentOn(engine, metadata, 'agt_1');
    const whole = await store.insert(agent, { node_id: null, mode: 'read', tools: ['ls', 'cat'] });
    const docs = await store.insert(agent, { node_id: 'nod_docs', mode: 'read_write', tools: ['write'] });
    t.deepEqual(await store.find(whole.id), whole, 'tools come back as a list');
    t.like(await store.forNode(agent, null), { id: whole.id });
    t.like(await store.forNode(agent, 'nod_docs'), { id: docs.id });
    t.is(await store.forNode(agent, 'nod_other'), null);
    t.is(await store.forNode('agt_other', null), null);
    t.deepEqual(
      (await store.list(agent)).map((a) => a.id),
      [whole, docs].sort((x, y) => x.created_at.localeCompare(y.created_at) || (x.id < y.id ? -1 : 1)).map((a) => a.id),
    );

    // The same node twice: a 409 naming the first, also when several race.
    const again = await t.throwsAsync(store.insert(agent, { node_id: null, mode: 'read', tools: ['ls'] }));
    t.like(again, { code: 'CONFLICT', details: { access_id: whole.id } });
    const raced = await Promise.allSettled(Array.from({ length: 6 }, () => store.insert(agent, { node_id: 'nod_new', mode: 'read', tools: ['ls'] })));
    t.is(raced.filter((r) => r.status === 'fulfilled').length, 1, 'one racer takes the node');
    t.true(raced.every((r) => r.status === 'fulfilled' || (r.reason as { code?: string }).code === 'CONFLICT'), 'the others are told 409');
    const won = (raced.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<AgentAccess>).value;

    // Moving an access onto a node another holds is refused; its own node is fine; a deleted one answers null.
    await t.throwsAsync(store.update(docs, { node_id: 'nod_new', mode: 'read', tools: ['ls'] }), { message: /already has an access to this node/ });
    const moved = await store.update(docs, { node_id: 'nod_docs', mode: 'read', tools: ['cat'] });
    t.like(moved, { id: docs.id, mode: 'read', tools: ['cat'], created_at: docs.created_at });
    t.like(await store.find(docs.id), { mode: 'read', tools: ['cat'] });
    await store.delete(won.id);
    t.is(await store.update(won, { node_id: 'nod_x', mode: 'read', tools: ['ls'] }), null);

    // Replace: the node already there keeps its id; the rest goes.
    const replaced = await store.replace(agent, [
      { node_id: 'nod_docs', mode: 'read_write', tools: ['write'] },
      { node_id: 'nod_b', mode: 'read', tools: ['ls'] },
    ]);
    t.is(replaced[0]!.id, docs.id);
    t.deepEqual((await store.list(agent)).map((a) => a.node_id).sort(), ['nod_b', 'nod_docs']);

    // Replaces racing each other: each runs whole, so the end is exactly one of them (no mix, no refusal).
    const sets = Array.from({ length: 5 }, (_, i) => [
      { node_id: `nod_r${i}`, mode: 'read' as const, tools: ['ls' as const] },
      { node_id: i % 2 ? 'nod_docs' : `nod_s${i}`, mode: 'read' as const, tools: ['cat' as const] },
    ]);
    await Promise.all(sets.map((items) => store.replace(agent, items)));
    const final = (await store.list(agent)).map((a) => a.node_id).sort();
    t.true(
      sets.some((items) => JSON.stringify(items.map((i) => i.node_id).sort()) === JSON.stringify(final)),
      `the accesses are one replace's: ${final.join(', ')}`,
    );
  });

  test(`${engine}: bash tools: a name once per agent (checked in the transaction, raced too); replace moves names between items`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new BashToolStore(metadata);
    const agent = await agentOn(engine, metadata, 'agt_1');
    const other = await agentOn(engine, metadata, 'agt_2');
    const bash = await store.insert(agent, { node_id: null, name: 'bash', mode: 'read', limits });
    await store.insert(other, { node_id: null, name: 'bash', mode: 'read', limits });
    t.deepEqual(await store.find(bash.id), bash, 'limits come back as an object');
    t.like(await store.byName(agent, 'bash'), { id: bash.id });
    t.is(await store.byName(agent, 'sh'), null);
    t.like(await t.throwsAsync(store.insert(agent, { node_id: 'nod_1', name: 'bash', mode: 'read', limits: {} })), { code: 'CONFLICT', details: { bash_id: bash.id, name: 'bash' } });

    const raced = await Promise.allSettled(Array.from({ length: 6 }, () => store.insert(agent, { node_id: null, name: 'shell', mode: 'read_write', limits: {} })));
    t.is(raced.filter((r) => r.status === 'fulfilled').length, 1);
    t.true(raced.every((r) => r.status === 'fulfilled' || (r.reason as { code?: string }).code === 'CONFLICT'));
    const shell = (await store.byName(agent, 'shell'))!;

    await t.throwsAsync(store.update(shell, { node_id: null, name: 'bash', mode: 'read', limits: {} }), { message: /already has a bash tool named "bash"/ });
    t.like(await store.update(shell, { node_id: 'nod_2', name: 'shell', mode: 'read', limits: { timeout_s: 9 } }), { id: shell.id, node_id: 'nod_2', limits: { timeout_s: 9 } });

    // The names swap: each keeps the id of the tool that had its name.
    const swapped = await store.replace(agent, [
      { node_id: 'nod_a', name: 'shell', mode: 'read', limits: {} },
      { node_id: 'nod_b', name: 'bash', mode: 'read', limits: {} },
      { node_id: null, name: 'third', mode: 'read', limits: {} },
    ]);
    t.deepEqual(
      swapped.map((b) => [b.name, b.id === shell.id ? 'shell' : b.id === bash.id ? 'bash' : 'new']),
      [
        ['shell', 'shell'],
        ['bash', 'bash'],
        ['third', 'new'],
      ],
    );
    t.is((await store.list(agent)).length, 3);
    t.is((await store.list(other)).length, 1, "another agent's tools are its own");
    await store.replace(agent, []);
    t.deepEqual(await store.list(agent), []);
  });

  test(`${engine}: changes of different fields at once all stay: an agent's settings and name, an access, a bash tool, a tool binding`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const accessStore = new AccessStore(metadata);
    const agents = new Agents({ metadata, connections: new AccessConnectionStore(metadata), accesses: accessStore, authorizer: null as never, defaultModel: 'openai:gpt-4.1-mini' });
    const { agent } = await agents.create(user, { projectId: 'prj_1', name: 'a', systemPrompt: 'p0' });
    const find = async () => (await agents.find(agent.connection.id))!;

    // Each change is made from the agent as read before either: the config is merged as stored.
    await Promise.all([agents.update(agent, { systemPrompt: 'p1' }), agents.update(agent, { model: 'openai:gpt-4.1' }), agents.update(agent, { name: 'renamed' })]);
    const changed = await find();
    t.like(changed.settings, { system_prompt: 'p1', model: 'openai:gpt-4.1' });
    t.is(changed.connection.name, 'renamed');
    await t.throwsAsync(agents.update(changed, { maxToolRounds: 0 }), { code: 'VALIDATION_ERROR' }, 'a setting is still checked, with the others as stored');
    const d = await agents.defaultFor(user, 'prj_1');
    await Promise.all([agents.update(d, { description: 'd' }), agents.update(d, { temperature: 0.5 })]);
    t.like(await agents.find(d.connection.id), { isDefault: true, settings: { description: 'd', temperature: 0.5 } });

    const deps = { ...reach, agents, metadata };
    const accesses = new AgentAccesses({ ...deps, store: accessStore });
    const access = await accesses.add(user, changed, { nodeId: 'nod_a', mode: 'read_write' });
    await Promise.all([accesses.update(user, changed, access.id, { nodeId: 'nod_b' }), accesses.update(user, changed, access.id, { mode: 'read' })]);
    t.like(await accessStore.find(access.id), { node_id: 'nod_b', mode: 'read', tools: [...defaultAccessTools.read] });
    await Promise.all([accesses.update(user, changed, access.id, { mode: 'read_write' }), accesses.update(user, changed, access.id, { nodeId: 'nod_c' })]);
    t.like(await accessStore.find(access.id), { node_id: 'nod_c', mode: 'read_write', tools: [...defaultAccessTools.read_write] });

    const bashStore = new BashToolStore(metadata);
    const bashTools = new AgentBashTools({ ...deps, store: bashStore });
    const bash = await bashTools.add(user, changed, { nodeId: 'nod_a' });
    await Promise.all([
      bashTools.update(user, changed, bash.id, { name: 'shell' }),
      bashTools.update(user, changed, bash.id, { mode: 'read_write' }),
      bashTools.update(user, changed, bash.id, { limits }),
      bashTools.update(user, changed, bash.id, { nodeId: 'nod_b' }),
    ]);
    t.like(await bashStore.find(bash.id), { name: 'shell', mode: 'read_write', limits, node_id: 'nod_b' });

    const tools = new ToolStore(metadata);
    const tool = await tools.create({ project_id: 'prj_1', node_id: null, name: 'x', description: '', type: 'cat', config: {}, created_by: 'usr_1' });
    const bindings = new AgentToolBindings({ ...deps, tools: { find: (id: string) => tools.find(id), findMany: (ids: string[]) => tools.findMany(ids), visible: (_: Principal, id: string) => tools.find(id) } as never });
    await bindings.bind(user, changed, { toolId: tool.id });
    await Promise.all([bindings.update(user, changed, tool.id, { name: 'reader' }), bindings.update(user, changed, tool.id, { description: 'reads' })]);
    t.like(await new BindingStore(metadata).find(changed.connection.id, tool.id), { name: 'reader', description: 'reads' });
  });

  test(`${engine}: chat sessions and messages: lists newest first with filters and totals; raced appends number a session's messages without gaps`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const sessions = new SessionStore(metadata);
    const messages = new MessageStore(metadata);
    const agent = await agentOn(engine, metadata, 'agt_1');
    const a = await sessions.create({ agentId: agent, projectId: 'prj_1', title: 'first', createdBy: 'usr_1' });
    const b = await sessions.create({ agentId: agent, projectId: 'prj_1', createdBy: 'usr_2' });
    t.deepEqual(await sessions.find(a.id), a);
    t.is(b.title, '');
    await sessions.touch(a.id, '2030-01-01T00:00:00.000Z');
    const all = await sessions.list({ projectId: 'prj_1' }, { limit: 10, offset: 0 });
    t.deepEqual(
      all.items.map((s) => s.id),
      [a.id, b.id],
      'the latest activity first',
    );
    t.is(all.total, 2);
    t.is(typeof all.total, 'number');
    t.deepEqual((await sessions.list({ agentId: agent, createdBy: 'usr_2' }, { limit: 10, offset: 0 })).items.map((s) => s.id), [b.id]);
    const second = await sessions.list({ projectId: 'prj_1' }, { limit: 1, offset: 1 });
    t.deepEqual({ ids: second.items.map((s) => s.id), total: second.total }, { ids: [b.id], total: 2 });
    t.like(await sessions.rename(b.id, 'renamed'), { id: b.id, title: 'renamed' });
    t.is(await sessions.rename('chat_none', 'x'), null);

    // Ten appends at once to one session: 1..n, none lost, none twice, each call's rows together.
    const appended = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        messages.append(a.id, [
          { role: 'user', content: `q${i}` },
          { role: 'assistant', content: `a${i}`, toolCalls: [] },
        ]),
      ),
    );
    const seqs = appended.flatMap((rows) => rows.map((m) => m.seq)).sort((x, y) => x - y);
    t.deepEqual(seqs, Array.from({ length: 20 }, (_, i) => i + 1));
    for (const rows of appended) t.is(rows[1]!.seq, rows[0]!.seq + 1, "a call's rows are consecutive");
    const page1 = await messages.page(a.id, { afterSeq: 0, limit: 15 });
    t.is(page1.items.length, 15);
    t.is(page1.next, 15);
    const page2 = await messages.page(a.id, { afterSeq: page1.next!, limit: 15 });
    t.deepEqual({ seqs: page2.items.map((m) => m.seq), next: page2.next }, { seqs: [16, 17, 18, 19, 20], next: null });
    t.is(page1.items[0]!.role, 'user');
    t.regex(String(page1.items[0]!.content.text), /^q\d$/);
    t.is((await messages.history(a.id)).length, 20);
    t.true((await sessions.find(a.id))!.updated_at < '2030', 'an append moves the session to now');
    t.deepEqual(await messages.append(b.id, []), []);
    await t.throwsAsync(messages.append('chat_none', [{ role: 'user', content: 'x' }]), { message: /Chat session not found/ });
    await t.throwsAsync(messages.append('chat_none', []), { message: /Chat session not found/ });

    await sessions.delete(a.id);
    t.is(await sessions.find(a.id), null);
    t.deepEqual((await messages.page(a.id, { afterSeq: 0, limit: 100 })).items, [], 'its messages went with it');
    await sql`DELETE FROM projects WHERE id = 'prj_1'`.execute(metadata.db);
    t.is(await sessions.find(b.id), null, "a project's sessions go with it");
  });

  test(`${engine}: executions: finished once (compare-and-set, raced), pages newest first with ties broken by seq, the session's creator, interrupted at start-up`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new ExecutionStore(metadata);
    const sessions = new SessionStore(metadata);
    const agent = await agentOn(engine, metadata, 'agt_1');
    const session = await sessions.create({ agentId: agent, projectId: 'prj_1', createdBy: 'usr_9' });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await store.start({ agentId: agent, sessionId: i === 0 ? session.id : null, model: 'openai:gpt' }));
    // Every start in the same millisecond: only the insertion order tells them apart.
    await metadata.db.updateTable('agent_executions').set({ started_at: T0 }).execute();
    const outcome = { status: 'succeeded' as const, inputTokens: 3, outputTokens: 4, toolCalls: [{ name: 'ls', arguments: { path: '' }, ok: true, duration_ms: 2 }], versionsWritten: [{ path: 'a.md', version: 2 }] };
    const finished = await Promise.all([store.finish(ids[0]!, outcome), store.finish(ids[0]!, { ...outcome, status: 'failed', error: { code: 'x' } })]);
    t.deepEqual(finished.filter(Boolean).length, 1, 'one finish wins');
    t.false(await store.finish('exe_none', outcome));
    const first = (await store.find(ids[0]!))!;
    t.like(first, { agent_id: agent, session_id: session.id, chat_created_by: 'usr_9' });
    t.true(first.status === 'succeeded' ? first.error === null && first.input_tokens === 3 : first.error?.code === 'x');
    t.deepEqual(first.versions_written, [{ path: 'a.md', version: 2 }]);
    t.false('seq' in first, 'seq stays inside the store');

    const newestFirst = [...ids].reverse();
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await store.list(agent, { limit: 3, before });
      seen.push(...page.items.map((e) => e.id));
      if (!page.next) break;
      before = page.next;
    }
    t.deepEqual(seen, newestFirst, 'no page skips or repeats one');
    t.like(await t.throwsAsync(store.list(agent, { limit: 3, before: 'exe_none' })), { code: 'VALIDATION_ERROR', details: [{ field: 'before' }] });
    t.like(await t.throwsAsync(store.list('agt_other', { limit: 3, before: ids[1] })), { code: 'VALIDATION_ERROR' }, "another agent's execution is no cursor");

    t.is(await store.failInterrupted(), 6);
    t.like(await store.find(ids[3]!), { status: 'failed', error: INTERRUPTED });
    await sessions.delete(session.id);
    t.like(await store.find(ids[0]!), { session_id: null, chat_created_by: null }, 'an execution outlives its session');
  });

  test(`${engine}: workspaces: one per agent (raced), drafts with binary content and sizes, upserted and removed in one change, gone with the workspace`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new WorkspaceStore(metadata);
    const agent = await agentOn(engine, metadata, 'agt_1');
    const input = { agentId: agent, projectId: 'prj_1', baseVersion: 12, roots: ['docs', ''], createdBy: 'usr_1' };
    const opened = await Promise.allSettled(Array.from({ length: 4 }, () => store.create(input)));
    t.is(opened.filter((r) => r.status === 'fulfilled').length, 1);
    t.true(opened.every((r) => r.status === 'fulfilled' || (r.reason as { code?: string }).code === 'CONFLICT'));
    t.like(await store.find(agent), { baseVersion: 12, roots: ['docs', ''], createdBy: 'usr_1' });
    t.is(await store.find('agt_none'), null);

    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80]);
    const base = { baseVersion: null, baseNodeId: null, baseProjectVersion: 12 };
    await store.change(agent, [], [
      { path: 'docs/b.bin', action: 'written', type: 'file', content: bytes, ...base },
      { path: 'docs/a', action: 'written', type: 'folder', content: null, ...base },
      { path: 'docs/gone.md', action: 'deleted', type: 'markdown', content: null, baseVersion: 3, baseNodeId: 'nod_g', baseProjectVersion: 12 },
    ]);
    t.deepEqual(
      (await store.entries(agent)).map((e) => [e.path, e.action, e.size]),
      [
        ['docs/a', 'written', 0],
        ['docs/b.bin', 'written', 6],
        ['docs/gone.md', 'deleted', 0],
      ],
    );
    const rows = await store.rows(agent);
    t.true(Buffer.isBuffer(rows[1]!.content) && rows[1]!.content.equals(bytes), 'bytes come back as they went in');
    t.like(rows[2], { baseVersion: 3, baseNodeId: 'nod_g', baseProjectVersion: 12, content: null });
    t.true((await store.content(agent, 'docs/b.bin'))!.equals(bytes));
    t.is(await store.content(agent, 'docs/a'), null);

    // One change: a row removed, one replaced in place (the upsert), one added.
    await store.change(agent, ['docs/gone.md'], [
      { path: 'docs/b.bin', action: 'written', type: 'file', content: Buffer.from('short'), ...base },
      { path: 'docs/c.md', action: 'written', type: 'markdown', content: Buffer.from('# c\n'), ...base },
    ]);
    t.deepEqual(
      (await store.entries(agent)).map((e) => [e.path, e.size]),
      [
        ['docs/a', 0],
        ['docs/b.bin', 5],
        ['docs/c.md', 4],
      ],
    );
    t.true((await store.find(agent))!.updatedAt >= (await store.find(agent))!.createdAt);

    t.true(await store.delete(agent));
    t.false(await store.delete(agent));
    t.deepEqual(await store.entries(agent), [], 'its drafts went with it');
  });

  test(`${engine}: tool bindings: a tool once per agent and an explicit name once (the unique indexes answer 409), gone with their tool`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const tools = new ToolStore(metadata);
    const store = new BindingStore(metadata);
    const agent = await agentOn(engine, metadata, 'agt_1');
    const tool = (name: string) => tools.create({ project_id: 'prj_1', node_id: null, name, description: '', type: 'cat', config: {}, created_by: 'usr_1' });
    const [x, y, z] = [await tool('x'), await tool('y'), await tool('z')];
    const bx = await store.insert(agent, x.id, { name: null, description: null });
    const by = await store.insert(agent, y.id, { name: 'reader', description: 'reads' });
    t.deepEqual(await store.byId(bx.id), bx);
    t.deepEqual(await store.find(agent, y.id), by);
    t.is(await store.find(agent, z.id), null);
    t.is(await store.count(agent), 2);

    const twice = await Promise.allSettled(Array.from({ length: 4 }, () => store.insert(agent, z.id, { name: null, description: null })));
    t.is(twice.filter((r) => r.status === 'fulfilled').length, 1, 'a tool is bound once, whoever races');
    for (const r of twice) if (r.status === 'rejected') t.like(r.reason, { code: 'CONFLICT', details: { tool_id: z.id } });
    await store.delete((await store.find(agent, z.id))!.id);
    t.like(await t.throwsAsync(store.insert(agent, z.id, { name: 'reader', description: null })), { code: 'CONFLICT', details: { name: 'reader' } });
    t.like(await t.throwsAsync(store.update(bx, { name: 'reader', description: null })), { code: 'CONFLICT' });
    t.like(await store.update(bx, { name: 'ex', description: 'mine' }), { id: bx.id, name: 'ex', description: 'mine' });
    t.deepEqual(
      (await store.list(agent)).map((b) => b.id),
      [bx, by].sort((p, q) => p.created_at.localeCompare(q.created_at) || (p.id < q.id ? -1 : 1)).map((b) => b.id),
    );

    await tools.delete(y.id);
    t.is(await store.byId(by.id), null, 'a binding goes with its tool');
    await store.delete(bx.id);
    t.is(await store.update(bx, { name: null, description: null }), null);
    t.is(await store.count(agent), 0);
  });

  test(`${engine}: the call log: a day's calls and errors, the last call; pruning keeps each agent's latest`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    let now = Date.parse(T0);
    const log = new ToolCallLog(metadata, () => now);
    const a = await agentOn(engine, metadata, 'agt_a');
    const b = await agentOn(engine, metadata, 'agt_b');
    await log.record(a, 'ls', true, 3.4, 'mcp');
    await log.record(a, 'cat', false, -1, 'chat');
    await log.record(b, 'ls', true, 1, 'mcp');
    now += 1000;
    await log.record(a, 'cat', true, 1, 'chat');
    t.deepEqual(await log.figures(a), { calls_24h: 3, errors_24h: 1, last_call_at: new Date(now).toISOString() });
    t.deepEqual(await log.figures('agt_none'), { calls_24h: 0, errors_24h: 0, last_call_at: null });

    // Eight days on: the old calls go, except b's latest (its last call stays known).
    now += 8 * 24 * 3600_000;
    await log.record(a, 'ls', true, 1, 'mcp');
    t.deepEqual(await log.figures(a), { calls_24h: 1, errors_24h: 0, last_call_at: new Date(now).toISOString() });
    t.deepEqual(await log.figures(b), { calls_24h: 0, errors_24h: 0, last_call_at: T0 });
    const { n } = await metadata.db.selectFrom('agent_tool_calls').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    t.is(Number(n), 2);
  });
}

test('sqlite: migration 027 numbers existing executions and calls in their rowid order, and the trigger numbers new ones after them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-agent-seq-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cns.db');
  openDatabase(file).close();
  // Back to the schema before 027, with rows written then.
  const raw = new Database(file);
  raw.exec(`
    DROP TRIGGER agent_executions_number; DROP INDEX agent_executions_seq; DROP INDEX agent_executions_agent;
    ALTER TABLE agent_executions DROP COLUMN seq;
    CREATE INDEX agent_executions_agent ON agent_executions(agent_id, started_at);
    DROP TRIGGER agent_tool_calls_number; DROP INDEX agent_tool_calls_seq; DROP INDEX agent_tool_calls_agent_seq;
    ALTER TABLE agent_tool_calls DROP COLUMN seq;
    DELETE FROM schema_migrations WHERE version = 27;
    INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ('usr_1', 'a@example.com', 'x', '${T0}', '${T0}');
    INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_1', 'Org', '${T0}', '${T0}');
    INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('prj_1', 'org_1', 'Project', '${T0}', '${T0}');
    INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at) VALUES ('agt_1', 'prj_1', 'agent', 'a', 'read_write', 'h', 'cns_', '${T0}', '${T0}');
  `);
  for (const id of ['exe_c', 'exe_a', 'exe_b']) raw.prepare(`INSERT INTO agent_executions (id, agent_id, status, started_at, model) VALUES (?, 'agt_1', 'succeeded', ?, 'm')`).run(id, T0);
  for (const at of [T0, '2026-01-01T00:00:01.000Z']) raw.prepare(`INSERT INTO agent_tool_calls (agent_id, tool_name, ok, duration_ms, surface, at) VALUES ('agt_1', 'ls', 1, 1, 'mcp', ?)`).run(at);
  raw.close();

  openDatabase(file).close();
  const metadata = openSqliteMetadata(file);
  t.teardown(() => metadata.close());
  const store = new ExecutionStore(metadata);
  t.deepEqual((await store.list('agt_1', { limit: 10 })).items.map((e) => e.id), ['exe_b', 'exe_a', 'exe_c'], 'the rowid order, newest first');
  const fresh = await store.start({ agentId: 'agt_1', sessionId: null, model: 'm' });
  await metadata.db.updateTable('agent_executions').set({ started_at: T0 }).where('id', '=', fresh).execute();
  t.deepEqual((await store.list('agt_1', { limit: 2 })).items.map((e) => e.id), [fresh, 'exe_b'], 'a new one comes after them');
  const seqs = await metadata.db.selectFrom('agent_tool_calls').select('seq').orderBy('seq').execute();
  t.deepEqual(
    seqs.map((r) => r.seq),
    [1, 2],
  );
});
