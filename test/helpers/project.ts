import type { TestServer } from './server.ts';

/** Initializes the signed-in user's default organization and returns its first project's id. */
export async function defaultProject(server: TestServer, token: string): Promise<{ projectId: string; orgId: string }> {
  const res = await server.api('POST', '/auth/initialize', { token });
  if (res.status !== 200 && res.status !== 201) throw new Error(`initialize failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { projectId: res.body.data.project.id, orgId: res.body.data.organization.id };
}

/** Creates another project in an organization. */
export async function createProject(server: TestServer, token: string, orgId: string, name = 'p'): Promise<string> {
  const res = await server.api('POST', '/projects/', { token, body: { name, org_id: orgId } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`project create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** Creates an access key (an `api` connection) on a project and returns the key. */
export async function createKey(
  server: TestServer,
  token: string,
  projectId: string,
  options: { scope_path?: string; mode?: 'read' | 'read_write'; name?: string } = {},
): Promise<{ key: string; id: string }> {
  const res = await server.api('POST', '/connections/', { token, body: { project_id: projectId, name: options.name ?? 'test key', kind: 'api', ...options } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`key create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { key: res.body.data.key, id: res.body.data.connection.id };
}

export type ContentCall = (method: string, route: string, body?: unknown) => ReturnType<TestServer['api']>;

/** Calls the path-addressed content API of one project as one caller. */
export function contentApi(server: TestServer, token: string, projectId: string): ContentCall {
  return (method, route, body) => server.api(method, `/content/${projectId}${route}`, { token, body });
}
