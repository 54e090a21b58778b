import type { Principal } from '../auth/principal.ts';
import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import { normalizePath } from '../content/paths.ts';
import { DomainError } from '../errors/domainError.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess, ContentAction, ContentGrant } from '../policies/contentAccess.ts';
import { pathInScope } from '../policies/scope.ts';
import type { Changelog } from '../events/changelog.ts';
import type { Tools } from '../tools/tools.ts';
import type { McpEndpoint, McpEndpoints } from './endpoints.ts';

/** What the MCP server reaches: the same core and policy every surface uses. */
export interface McpEnv {
  content: ContentStore;
  access: ContentAccess;
  authorizer: Authorizer;
  tools: Tools;
  changelog: Changelog;
  endpoints: McpEndpoints;
}

/**
 * One MCP request as the gate resolved it: the endpoint as it is now (its folder followed to
 * where it is), and who calls (the endpoint's own key, or a user who may read the project).
 */
export interface CallContext {
  env: McpEnv;
  endpoint: McpEndpoint;
  /** The project path of the endpoint's folder: nothing outside it is reachable. */
  root: string;
  /** That folder as the gate found it for this request (the library's tools start from it instead of reading it again). */
  rootNode: NodeInfo;
  principal: Principal;
}

export const projectOf = (c: CallContext) => c.endpoint.connection.project_id;

/** What changes made through the endpoint without a message of the caller's are recorded as coming through. */
export const viaOf = (c: CallContext) => `via MCP endpoint "${c.endpoint.connection.name}"`;

/** The caller's grant on the endpoint's project, held to the endpoint's folder too. */
export async function grantIn(c: CallContext, action: ContentAction): Promise<ContentGrant> {
  const g = await c.env.access.grant(c.principal, projectOf(c), action);
  c.env.access.requirePath(g, c.root);
  return g;
}

/** The one refusal for a path outside the endpoint's folder, as tool errors say it. */
export function outsideEndpoint(root: string, path: string): DomainError {
  return new DomainError('FORBIDDEN', `"${path}" is outside this MCP endpoint's folder "${root}": use "${root}" or a path beneath it, such as "${root}/notes.md".`, {
    path,
    root,
  });
}

/**
 * A project path given to a tool (`docs/a.md`; a leading `/` is tolerated; empty means the
 * endpoint's folder), refused when it leaves the endpoint's folder.
 */
export function endpointPath(c: CallContext, raw: string | undefined, field: string): string {
  const given = (raw ?? '').replace(/^\/+/, '');
  const path = given === '' ? c.root : normalizePath(given, field);
  if (!pathInScope(c.root, path)) throw outsideEndpoint(c.root, path);
  return path;
}

/**
 * The same, relative to the endpoint's folder, as the tools library takes paths (relative to
 * the tool's node). Anything that is not a string is passed on for the library to refuse.
 */
export function libraryPath(c: CallContext, raw: unknown, field: string): unknown {
  if (typeof raw !== 'string') return raw;
  const path = endpointPath(c, raw, field);
  return path === c.root ? '' : path.slice(c.root.length + 1);
}
