import test from 'ava';
import { findLossyNumber } from '../../src/http/jsonNumbers.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newProject } from '../git/gitFixture.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

test('numbers JSON.parse would alter are found with their field path', (t) => {
  t.deepEqual(findLossyNumber('{"a": {"b": [1, 2, 1e400]}}'), { field: 'a.b.2', literal: '1e400' });
  t.deepEqual(findLossyNumber('{"files": [{"content": {"n": 9007199254740993}}]}'), { field: 'files.0.content.n', literal: '9007199254740993' });
  t.deepEqual(findLossyNumber('[{"x": "1e400", "y": -1e-400}]'), { field: '0.y', literal: '-1e-400' });
  t.deepEqual(findLossyNumber('{"k\\"ey,": [0, {"z": 123456789012345678901234567890}]}'), { field: 'k"ey,.1.z', literal: '123456789012345678901234567890' });
  // Exact or merely rounded decimals are fine, as are large numbers written as strings.
  t.is(findLossyNumber('{"a": 9007199254740991, "b": 1e20, "c": 0.1, "d": 1.5e300, "e": "99999999999999999999", "f": 0, "g": 0e5}'), null);
});

test('every route answers 422 naming the field for a number that does not survive a round trip, and writes nothing', async (t) => {
  const p = await newProject(server, 'numbers');
  const c = (method: string, route: string, raw: string) =>
    server.api(method, route, { token: p.token, raw, headers: { 'content-type': 'application/json' } });
  const w = await c('POST', `/content/${p.projectId}/write`, '{"path": "n.json", "node_type": "json", "content": {"big": 1e400}}');
  t.is(w.status, 422);
  t.is(w.body.error.code, 'VALIDATION_ERROR');
  t.is(w.body.error.details[0].field, 'content.big');
  const b = await c('POST', `/content/${p.projectId}/bulk-write`, '{"files": [{"path": "a.json", "node_type": "json", "content": {"id": 12345678901234567890}}]}');
  t.is(b.status, 422);
  t.is(b.body.error.details[0].field, 'files.0.content.id');
  // Not only content routes: the rule is in the body parser.
  const r = await c('POST', `/content/${p.projectId}/rollback`, '{"target_version": 9007199254740993}');
  t.is(r.status, 422);
  t.is(r.body.error.details[0].field, 'target_version');
  const stat = await server.api('GET', `/content/${p.projectId}/ls`, { token: p.token });
  t.deepEqual(stat.body.data.entries, []);
  // Exact values still go through.
  const okWrite = await c('POST', `/content/${p.projectId}/write`, '{"path": "n.json", "node_type": "json", "content": {"n": 9007199254740991, "x": 1.25}}');
  t.is(okWrite.status, 201, JSON.stringify(okWrite.body));
});
