import test from 'ava';
import { CliUser } from '../cli/harness.ts';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { indexReady } from './helpers.ts';

let server: TestServer;

test.after.always(async () => server?.stop());

test('cns search "query" [--tool ID] [--json] finds content through a search tool', async (t) => {
  server = await startTestServer();
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const cli = new CliUser();
  const flags = ['--server', server.url, '--token', token, '--project', projectId];
  const none = await cli.run(['search', 'anything', ...flags]);
  t.not(none.code, 0);
  t.regex(none.stderr, /no search tool/);
  await contentApi(server, token, projectId)('POST', '/write', { path: 'a/doc.md', node_type: 'markdown', content: '# Doc\n\nThe pangolin is here.' });
  await contentApi(server, token, projectId)('POST', '/write', { path: 'b/setup.md', node_type: 'markdown', content: '# Setup\n\nRun **quokka** first; the quokka does the rest.' });
  const tool = (await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'cli' } })).body.data.tool;
  await indexReady(server, token, tool.id);
  const human = await cli.run(['search', 'pangolin', ...flags]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /a\/doc\.md › Doc/);
  t.regex(human.stdout, /\*\*pangolin\*\*/);
  // Markdown bold in the text meets the highlight: the text stays as written, other matches are marked.
  const bold = await cli.run(['search', 'quokka', ...flags]);
  t.is(bold.code, 0, bold.stderr);
  t.regex(bold.stdout, /Run \*\*quokka\*\* first; the \*\*quokka\*\* does the rest\./);
  t.notRegex(bold.stdout, /\*\*\*\*/);
  const json = await cli.run(['search', 'pangolin', '--tool', tool.id, '--json', ...flags]);
  t.is(json.code, 0, json.stderr);
  t.is(json.json.results[0].path, 'a/doc.md');
  const bad = await cli.run(['search', 'pangolin', '--tool', tool.id, '-k', '500', ...flags]);
  t.not(bad.code, 0);
  t.regex(bad.stderr, /top_k/);
});
