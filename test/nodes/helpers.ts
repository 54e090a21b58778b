import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.ts';

export interface NodesFixture {
  server: TestServer;
  token: string;
  pid: string;
  orgId: string;
  /** Calls the API as the project's owner (or with `token`). */
  call(method: string, path: string, body?: unknown, token?: string): Promise<ApiResponse>;
  /** Creates a node through POST /nodes/{type} and returns its data. */
  make(type: 'folder' | 'json' | 'markdown', name: string, parentId?: string | null, content?: unknown): Promise<any>;
}

/** A server with a signed-in owner and their default project. */
export async function nodesFixture(): Promise<NodesFixture> {
  const server = await startTestServer();
  const token = (await server.login()).token;
  const { projectId: pid, orgId } = await defaultProject(server, token);
  const call: NodesFixture['call'] = (method, path, body, as = token) => server.api(method, path, { token: as, body });
  const make: NodesFixture['make'] = async (type, name, parentId = null, content) => {
    const res = await call('POST', `/nodes/${type}`, { project_id: pid, parent_id: parentId, name, ...(content === undefined ? {} : { content }) });
    if (res.status !== 201) throw new Error(`create ${type} ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  return { server, token, pid, orgId, call, make };
}
