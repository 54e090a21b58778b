import test from 'ava';
import { startFakeOpenAi, type FakeProvider } from '../agents/fakeProviders.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { submitFiles, waitTask } from './ingestClient.ts';

// ETL rules: CRUD and who may, schema checks at creation, matching, and JSON extraction by the
// language model through the local OpenAI wire-format server (one tool, emit_result; ajv
// validation; one retry with the errors).
let server: TestServer;
let fake: FakeProvider;
let token: string;
let orgId: string;
let projectId: string;
test.before(async () => {
  fake = await startFakeOpenAi();
  server = await startTestServer({}, { CNS_OPENAI_BASE_URL: fake.url, CNS_OPENAI_API_KEY: 'x', CNS_DEFAULT_MODEL: 'openai:gpt-test' });
  token = (await server.login()).token;
  ({ projectId, orgId } = await defaultProject(server, token));
});
test.after.always(async () => {
  await server?.stop();
  await fake?.close();
});

const invoiceSchema = {
  type: 'object',
  properties: { title: { type: 'string' }, total: { type: 'number' } },
  required: ['title', 'total'],
  additionalProperties: false,
};
const createRule = (body: Record<string, unknown>, tok = token) => server.api('POST', '/ingest/rules', { token: tok, body: { project_id: projectId, ...body } });

test.serial('rules: create, list, read, delete; viewer 403, outsider 404, a scoped key 403 (rules are project-wide)', async (t) => {
  const created = await createRule({ name: 'Sheets as rows', description: 'CSV to JSON', match: { extensions: ['.CSV', 'tsv'], mime_types: ['Text/CSV'] }, target: 'json' });
  t.is(created.status, 201, JSON.stringify(created.body));
  assertDocumented(t, server.services, 'post', '/ingest/rules', created);
  const rule = created.body.data;
  t.like(rule, { name: 'Sheets as rows', target: 'json', json_schema: null, instructions: null, match: { extensions: ['csv', 'tsv'], mime_types: ['text/csv'] } });
  const list = await server.api('GET', `/ingest/rules?project_id=${projectId}`, { token });
  assertDocumented(t, server.services, 'get', '/ingest/rules', list);
  t.deepEqual(list.body.data.rules.map((r: any) => r.id), [rule.id]);
  const read = await server.api('GET', `/ingest/rules/${rule.id}`, { token });
  assertDocumented(t, server.services, 'get', '/ingest/rules/{rule_id}', read);

  const viewer = await server.createUser('rules-viewer@example.com');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  const outsider = await server.createUser('rules-outsider@example.com');
  const scoped = await createKey(server, token, projectId, { scope_path: 'docs', mode: 'read_write' });
  t.is((await createRule({ name: 'x' }, viewer.token)).status, 403);
  t.is((await createRule({ name: 'x' }, outsider.token)).status, 404);
  const byScoped = await createRule({ name: 'x' }, scoped.key);
  t.is(byScoped.status, 403);
  t.regex(byScoped.body.message, /whole project/);
  t.is((await server.api('GET', `/ingest/rules/${rule.id}`, { token: viewer.token })).status, 200, 'a viewer reads rules');
  t.is((await server.api('GET', `/ingest/rules/${rule.id}`, { token: outsider.token })).status, 404);
  t.is((await server.api('GET', `/ingest/rules?project_id=${projectId}`, { token: outsider.token })).status, 404);
  t.is((await server.api('DELETE', `/ingest/rules/${rule.id}`, { token: viewer.token })).status, 403);
  t.is((await server.api('DELETE', `/ingest/rules/${rule.id}`, { token: outsider.token })).status, 404);

  const deleted = await server.api('DELETE', `/ingest/rules/${rule.id}`, { token });
  assertDocumented(t, server.services, 'delete', '/ingest/rules/{rule_id}', deleted);
  t.is((await server.api('GET', `/ingest/rules/${rule.id}`, { token })).status, 404);
});

test.serial('a rule is checked at creation: its JSON Schema compiles and describes an object or array; target and instructions agree with it', async (t) => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ name: 'bad', json_schema: { type: 'object', properties: { a: { type: 'nonsense' } } } }, 'json_schema', /not a usable JSON Schema/],
    [{ name: 'bad', json_schema: { type: 'object', unknownKeyword: 1 } }, 'json_schema', /unknown keyword/],
    [{ name: 'bad', json_schema: { type: 'string' } }, 'json_schema', /object or an array/],
    [{ name: 'bad', json_schema: invoiceSchema, target: 'markdown' }, 'target', /target must be json/],
    [{ name: 'bad', instructions: 'be nice' }, 'instructions', /give json_schema too/],
    [{ name: '' }, 'name', /./],
    [{ name: 'bad', target: 'yaml' }, 'target', /./],
  ];
  for (const [body, field, message] of cases) {
    const res = await createRule(body);
    t.is(res.status, 422, JSON.stringify(res.body));
    t.is(res.body.error.details[0].field, field);
    t.regex(res.body.message, message);
  }
  const draft2020 = await createRule({ name: 'ok 2020', json_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }] } });
  t.is(draft2020.status, 201, JSON.stringify(draft2020.body));
  await server.api('DELETE', `/ingest/rules/${draft2020.body.data.id}`, { token });
});

test.serial('a schema rule without a configured provider is refused at creation, naming the setting', async (t) => {
  const bare = await startTestServer();
  t.teardown(() => bare.stop());
  const tok = (await bare.login()).token;
  const { projectId: pid } = await defaultProject(bare, tok);
  const res = await bare.api('POST', '/ingest/rules', { token: tok, body: { project_id: pid, name: 'needs a model', json_schema: invoiceSchema } });
  t.is(res.status, 422);
  t.is(res.body.error.details[0].field, 'json_schema');
  t.regex(res.body.message, /CNS_OPENAI_API_KEY/);
  const plain = await bare.api('POST', '/ingest/rules', { token: tok, body: { project_id: pid, name: 'no model needed', target: 'json' } });
  t.is(plain.status, 201, 'a rule without a schema needs no provider');
});

test.serial('without rule_id or mode the first matching rule applies; an explicit mode or rule wins; a mode against the rule is 422', async (t) => {
  const pid = await createProject(server, token, orgId, 'matching');
  const api = (body: Record<string, unknown>) => server.api('POST', '/ingest/rules', { token, body: { project_id: pid, ...body } });
  const byExt = (await api({ name: 'csv rows', match: { extensions: ['csv'] }, target: 'json' })).body.data;
  const byMime = (await api({ name: 'text as md', match: { mime_types: ['text/*'] }, target: 'markdown' })).body.data;
  const noMatch = (await api({ name: 'only by id', target: 'json' })).body.data;

  const res = await submitFiles(server, token, { project_id: pid, path: 'm' }, [
    { name: 'rows.csv', content: 'n,v\na,1\n', type: 'text/csv' },
    { name: 'notes', content: 'plain words', type: 'text/plain' },
    { name: 'blob.bin', content: 'zz' },
  ]);
  const [rows, notes, blob] = res.body.data.tasks;
  t.is(rows.rule_id, byExt.id, 'the first rule matching by extension');
  t.is(notes.rule_id, byMime.id, 'by media type, type/*');
  t.is(blob.rule_id, null, 'no rule matches: the default');
  const rowsDone = await waitTask(server, token, rows.id);
  t.deepEqual(rowsDone.result.nodes.map((n: any) => [n.path, n.type]), [['m/rows.json', 'json']]);

  const explicit = await submitFiles(server, token, { project_id: pid, path: 'm2', mode: 'markdown' }, [{ name: 'rows.csv', content: 'n,v\na,1\n' }]);
  t.is(explicit.body.data.tasks[0].rule_id, null, 'an explicit mode: no rule is matched');
  t.deepEqual((await waitTask(server, token, explicit.body.data.tasks[0].id)).result.nodes.map((n: any) => n.path), ['m2/rows.md']);
  const named = await submitFiles(server, token, { project_id: pid, path: 'm3', rule_id: noMatch.id }, [{ name: 'rows.csv', content: 'n,v\na,1\n' }]);
  t.is(named.body.data.tasks[0].rule_id, noMatch.id);
  const against = await submitFiles(server, token, { project_id: pid, path: 'm4', rule_id: noMatch.id, mode: 'markdown' }, [{ name: 'rows.csv', content: 'n,v\n' }]);
  t.is(against.status, 422);
  t.is(against.body.error.details[0].field, 'mode');
  const foreign = await submitFiles(server, token, { project_id: projectId, rule_id: noMatch.id }, [{ name: 'rows.csv', content: 'n,v\n' }]);
  t.is(foreign.status, 422, "a rule of another project");
});

test.serial('a schema rule: the model is offered emit_result with the schema and its arguments become the json node', async (t) => {
  const rule = (await createRule({ name: 'Invoices', json_schema: invoiceSchema, instructions: 'Totals are in euros.' })).body.data;
  fake.requests.length = 0;
  fake.script({ text: ['Reading it.'], toolCalls: [{ name: 'emit_result', arguments: { title: 'Invoice 7', total: 42.5 } }] });
  const res = await submitFiles(server, token, { project_id: projectId, path: 'invoices', rule_id: rule.id }, [{ name: 'invoice-7.txt', content: 'Invoice 7\nTotal due: 42.50 EUR' }]);
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.deepEqual(task.result.nodes.map((n: any) => [n.path, n.type]), [['invoices/invoice-7.json', 'json']]);
  const node = await server.api('GET', `/content/${projectId}/cat?path=invoices/invoice-7.json`, { token });
  t.deepEqual(node.body.data.content, { title: 'Invoice 7', total: 42.5 });

  t.is(fake.requests.length, 1);
  const sent = fake.requests[0]!.body;
  t.is(sent.model, 'gpt-test');
  t.deepEqual(sent.tools, [{ type: 'function', function: { name: 'emit_result', description: sent.tools[0].function.description, parameters: invoiceSchema } }]);
  t.regex(sent.messages[0].content, /Totals are in euros/, 'the instructions are in the system prompt');
  t.regex(sent.messages.at(-1).content, /Total due: 42\.50 EUR/, 'the converted text is sent');
});

test.serial('an invalid answer is sent back once with the errors; valid the second time, the task succeeds', async (t) => {
  const rule = (await createRule({ name: 'Invoices again', json_schema: invoiceSchema })).body.data;
  fake.requests.length = 0;
  fake.script({ toolCalls: [{ name: 'emit_result', arguments: { total: 'lots' } }] }, { toolCalls: [{ name: 'emit_result', arguments: { title: 'Fixed', total: 1 } }] });
  const res = await submitFiles(server, token, { project_id: projectId, path: 'retry', rule_id: rule.id }, [{ name: 'bill.txt', content: 'Bill: 1 EUR' }]);
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.deepEqual((await server.api('GET', `/content/${projectId}/cat?path=retry/bill.json`, { token })).body.data.content, { title: 'Fixed', total: 1 });
  t.is(fake.requests.length, 2);
  const retry = fake.requests[1]!.body.messages;
  const toolMessage = retry.find((m: any) => m.role === 'tool');
  t.regex(toolMessage.content, /do not follow the schema: .*title.*; \/total must be number/);
  t.is(retry.find((m: any) => m.role === 'assistant').tool_calls[0].function.name, 'emit_result');
});

test.serial('invalid twice fails the task with the validation errors, and nothing is written', async (t) => {
  const rule = (await createRule({ name: 'Invoices strict', json_schema: invoiceSchema })).body.data;
  fake.requests.length = 0;
  fake.script({ toolCalls: [{ name: 'emit_result', arguments: { title: 'A', total: 1, extra: true } }] }, { text: ['I would rather not call tools.'] });
  const res = await submitFiles(server, token, { project_id: projectId, path: 'twice', rule_id: rule.id }, [{ name: 'x.txt', content: 'x: 1' }]);
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'failed');
  t.is(task.error.code, 'extraction_invalid');
  t.regex(task.error.message, /did not call emit_result/);
  t.deepEqual(task.error.details.errors, [{ pointer: '', message: 'the model did not call emit_result' }]);
  t.is(fake.requests.length, 2);
  t.regex(fake.requests[1]!.body.messages.find((m: any) => m.role === 'tool').content, /must NOT have additional properties/);
  t.is((await server.api('GET', `/content/${projectId}/ls?path=twice`, { token })).status, 404);
});

test.serial('an array schema is asked for as {result: …} (tool arguments are objects) and written as the array', async (t) => {
  const rule = (await createRule({ name: 'Names', json_schema: { type: 'array', items: { type: 'string' }, minItems: 1 } })).body.data;
  fake.requests.length = 0;
  fake.script({ toolCalls: [{ name: 'emit_result', arguments: { result: ['Ada', 'Grace'] } }] });
  const res = await submitFiles(server, token, { project_id: projectId, path: 'names', rule_id: rule.id }, [{ name: 'people.md', content: '# People\n\nAda and Grace.' }]);
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.deepEqual((await server.api('GET', `/content/${projectId}/cat?path=names/people.json`, { token })).body.data.content, ['Ada', 'Grace']);
  t.deepEqual(fake.requests[0]!.body.tools[0].function.parameters, { type: 'object', properties: { result: { type: 'array', items: { type: 'string' }, minItems: 1 } }, required: ['result'] });
});

test.serial('a provider failure fails the task with provider_<kind>', async (t) => {
  const rule = (await createRule({ name: 'Invoices down', json_schema: invoiceSchema })).body.data;
  fake.script({ status: 503, errorMessage: 'overloaded' });
  const res = await submitFiles(server, token, { project_id: projectId, path: 'down', rule_id: rule.id }, [{ name: 'x.txt', content: 'x' }]);
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'failed');
  t.is(task.error.code, 'provider_unavailable');
  t.regex(task.error.message, /overloaded/);
});
