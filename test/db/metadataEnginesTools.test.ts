import test from 'ava';
import { sql } from 'kysely';
import { ToolStore } from '../../src/tools/toolStore.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

/** The tools store gives the same answers on SQLite and PostgreSQL. */

for (const engine of ENGINES) {
  test(`${engine}: tools: create, read with config, list by project, node and organization, update, count search tools, delete`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const now = '2026-01-01T00:00:00.000Z';
    await sql`INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_2', 'Other', ${now}, ${now})`.execute(metadata.db);
    await sql`INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('prj_2', 'org_2', 'Elsewhere', ${now}, ${now})`.execute(metadata.db);
    const store = new ToolStore(metadata);
    const tool = (name: string, type: string, nodeId: string | null, projectId = 'prj_1') =>
      store.create({ project_id: projectId, node_id: nodeId, name, description: '', type, config: { name, nested: { n: 1 } }, created_by: 'usr_1' });
    const a = await tool('a', 'search', null);
    const b = await tool('b', 'cat', 'nod_1');
    const c = await tool('c', 'search', 'nod_1');
    const other = await tool('o', 'search', null, 'prj_2');

    t.deepEqual(await store.find(a.id), a, 'the config comes back as an object');
    t.is(await store.find('tool_missing'), null);
    const many = await store.findMany([a.id, c.id, a.id, 'tool_missing']);
    t.deepEqual([...many.keys()].sort(), [a.id, c.id].sort());
    t.deepEqual(await store.findMany([]), new Map());
    const names = (list: { name: string }[]) => list.map((x) => x.name);
    // In the order created: by time, then id (two made in the same millisecond).
    const created = (...list: { name: string; created_at: string; id: string }[]) => names(list.sort((x, y) => x.created_at.localeCompare(y.created_at) || (x.id < y.id ? -1 : 1)));
    t.deepEqual(names(await store.listByProject('prj_1')), created(a, b, c));
    t.deepEqual(names(await store.listByNode('nod_1')), created(b, c));
    t.deepEqual(names(await store.listByOrg('org_1')), created(a, b, c));
    t.deepEqual(names(await store.listByOrg('org_2')), ['o']);
    t.deepEqual((await store.projectsWithSearch()).sort(), ['prj_1', 'prj_2']);
    t.is(await store.searchToolCount('prj_1'), 2);
    t.is(typeof (await store.searchToolCount('prj_1')), 'number', 'a count is a number on both');

    const renamed = await store.update(b, { name: 'b2', config: { other: true }, description: undefined });
    t.like(await store.find(b.id), { name: 'b2', description: '', config: { other: true }, updated_at: renamed.updated_at, created_at: b.created_at });

    await store.delete(a.id);
    await store.delete(c.id);
    t.is(await store.searchToolCount('prj_1'), 0);
    t.deepEqual(await store.projectsWithSearch(), ['prj_2']);
    await sql`DELETE FROM projects WHERE id = 'prj_2'`.execute(metadata.db);
    t.is(await store.find(other.id), null, "a project's tools go with it");
  });
}
