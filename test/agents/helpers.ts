import type { ExecutionContext } from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import type { ApiResponse, TestServer } from '../helpers/server.ts';

export interface CreatedAgent {
  id: string;
  key: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  agent: any;
}

/** Creates an agent over REST (201 expected). */
export async function createAgent(server: TestServer, token: string, projectId: string, body: Record<string, unknown> = {}): Promise<CreatedAgent> {
  const res = await server.api('POST', '/agent-config/', { token, body: { name: 'helper', project_id: projectId, system_prompt: 'Be brief.', ...body } });
  if (res.status !== 201) throw new Error(`agent create: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.agent.id, key: res.body.data.key, agent: res.body.data.agent };
}

/** The id of the node at `path` (it must exist). */
export function nodeAt(server: TestServer, projectId: string, path: string): string {
  const node = server.services.content.findByPath(projectId, path);
  if (!node) throw new Error(`no node at ${path}`);
  return node.id;
}

/** Adds a user to a project with a role (the admin's token). */
export async function addMember(server: TestServer, token: string, projectId: string, label: string, role: 'viewer' | 'editor' | 'admin') {
  const user = await server.createUser(`${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}@example.com`);
  const res = await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: user.id, role } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`member add: ${res.status} ${JSON.stringify(res.body)}`);
  return user;
}

/** The fields a 422 names. */
export const fieldsOf = (res: ApiResponse): string[] => (res.body.error?.details ?? []).map((d: { field: string }) => d.field);

/** A documented-answer check bound to a server. */
export const documented = (server: TestServer) => (t: ExecutionContext, method: string, path: string, res: ApiResponse) => assertDocumented(t, server.services, method, path, res);
