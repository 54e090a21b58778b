import test from 'ava';
import { readFileSync } from 'node:fs';
import { CliUser } from '../cli/harness.ts';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The README's error examples are what the service really answers.

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
let server: TestServer;
let token: string;
let projectId: string;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  projectId = (await defaultProject(server, token)).projectId;
});
test.after.always(async () => server?.stop());

test('the error envelope of the curl session is the real one, top-level code included', async (t) => {
  const m = /-d '(\{"path":"\.\.\/x"[^']*\})' \| jq -c \.\n(\{.*\})\n/.exec(readme);
  t.truthy(m, 'the README shows a refused write of ../x');
  const real = await server.api('POST', `/content/${projectId}/write`, { token, body: JSON.parse(m![1]!) });
  t.is(real.status, 422);
  t.deepEqual(JSON.parse(m![2]!), real.body);
  t.is(real.body.code, 'VALIDATION_ERROR');
});

test('the --base-version 0 conflict of the terminal session is the real message and exit status', async (t) => {
  const m = /\$ echo '(\{"retries": 5\})' \| cns write (\S+) --base-version 0; echo "exit \$\?"\n(cns: .*)\nexit (\d)\n/.exec(readme);
  t.truthy(m, 'the README shows a write with --base-version 0 of a node that exists');
  const u = new CliUser({ CNS_SERVER: server.url, CNS_TOKEN: token, CNS_PROJECT: projectId });
  t.teardown(() => u.dispose());
  t.is((await u.run(['write', m![2]!], { input: '{"retries": 3}' })).code, 0);
  const r = await u.run(['write', m![2]!, '--base-version', '0'], { input: m![1]! });
  t.is(`${r.stderr}exit ${r.code}`, `${m![3]}\nexit ${m![4]}`);
});
