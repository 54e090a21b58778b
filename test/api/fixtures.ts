import type { OrgMembersTable } from '../../src/db/metadata/tables/auth.ts';
import type { TestServer } from '../helpers/server.ts';

/** Small builders over the HTTP API shared by the test files of this folder. */
export async function createOrg(server: TestServer, token: string, name = 'Org'): Promise<string> {
  const res = await server.api('POST', '/organizations', { token, body: { name } });
  if (res.status !== 201) throw new Error(`create org: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

export async function createProject(server: TestServer, token: string, orgId: string, name = 'Project'): Promise<string> {
  const res = await server.api('POST', '/projects', { token, body: { name, org_id: orgId } });
  if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** Puts a user straight into an organization with a role (invitations have their own tests). */
export async function addOrgMember(server: TestServer, orgId: string, userId: string, role: string): Promise<void> {
  // The query builder, on the metadata store (either engine): the caches count the write at once.
  await server.services.metadata.db
    .insertInto('org_members')
    .values({ org_id: orgId, user_id: userId, role: role as OrgMembersTable['role'], created_at: new Date().toISOString() })
    .execute();
}

export async function createKey(
  server: TestServer,
  token: string,
  projectId: string,
  options: { mode?: string; scope_path?: string; name?: string } = {},
): Promise<{ id: string; key: string }> {
  const res = await server.api('POST', '/connections', { token, body: { project_id: projectId, kind: 'api', name: options.name ?? 'key', ...options } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.connection.id, key: res.body.data.key };
}

let counter = 0;
/** A unique email per call, so tests in one file never share users. */
export const email = (label: string) => `${label}-${process.pid}-${++counter}@example.com`;
