import test from 'ava';
import { TableStore } from '../../src/data/tables/tableStore.ts';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * A table delete crosses from the content core to the metadata store (issue 30): the node goes to
 * the trash by a commit naming the table, then the record goes. When removing the record fails
 * (a crash there), the table is still deleted for every reader, and the first read removes it.
 */
let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  ({ projectId, orgId } = await defaultProject(server, token));
});
test.after.always(async () => server?.stop());

const api = (method: string, path: string, body?: unknown) => server.api(method, path, { token, body });
const record = (id: string) => server.services.metadata.db.selectFrom('json_tables').select('id').where('id', '=', id).executeTakeFirst();

test.serial('the record is left behind by a delete (removing it fails once): reads answer the table deleted and remove the record', async (t) => {
  const created = await api('POST', '/tables/', { project_id: projectId, name: 'Half Deleted', data: [1, 2] });
  t.is(created.status, 201, JSON.stringify(created.body));
  const table = created.body.data;
  const remove = TableStore.prototype.delete;
  let failures = 1;
  TableStore.prototype.delete = async function (id: string) {
    if (failures-- > 0) throw new Error('the metadata store went away');
    return remove.call(this, id);
  };
  t.teardown(() => {
    TableStore.prototype.delete = remove;
  });
  const deleted = await api('DELETE', `/tables/${table.id}`);
  t.is(deleted.status, 200, JSON.stringify(deleted.body));
  t.truthy(deleted.body.data.trash_path, 'the node went to the trash');
  t.truthy(await record(table.id), 'the record was left behind');

  const listed = await api('GET', `/tables/?org_id=${orgId}`);
  t.is(listed.status, 200);
  t.false(listed.body.data.tables.some((x: { id: string }) => x.id === table.id), 'not listed');
  t.is(await record(table.id), undefined, 'the read removed the record');
  t.is((await api('GET', `/tables/${table.id}`)).status, 404);
  t.is((await api('GET', `/tables/${table.id}/data`)).status, 404);
  const node = await api('GET', `/nodes/${table.node_id}`);
  t.is(node.body.data.state, 'trashed', 'the node stays in the trash, restorable');
});

test.serial('a record left behind is found by a read of the table itself too', async (t) => {
  const created = await api('POST', '/tables/', { project_id: projectId, name: 'Read Directly' });
  const table = created.body.data;
  const remove = TableStore.prototype.delete;
  let failures = 1;
  TableStore.prototype.delete = async function (id: string) {
    if (failures-- > 0) throw new Error('the metadata store went away');
    return remove.call(this, id);
  };
  t.teardown(() => {
    TableStore.prototype.delete = remove;
  });
  t.is((await api('DELETE', `/tables/${table.id}`)).status, 200);
  t.truthy(await record(table.id));
  const read = await api('GET', `/tables/${table.id}`);
  t.is(read.status, 404);
  t.is(read.body.code, 'NOT_FOUND');
  t.is(await record(table.id), undefined);
});
