import Router from '@koa/router';
import type { Context } from 'koa';
import type { Principal } from '../../auth/principal.ts';
import type { NodeInfo } from '../../content/types.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';
import type { ContentAction, OrgAction, ProjectAction } from '../../policies/permissions.ts';
import { principalOf } from '../middleware/authenticate.ts';
import { parseInput } from '../validate.ts';
import { authorizationKind, type ProjectOwned, type RouteAuthorization, type RouteDeclaration, type RouteGroup, type RouteInput } from './declaration.ts';

/** What the mount asks to enforce declared checks: the two doors of the policy, and nodes by id. */
export interface RouteGuards {
  authorizer: Pick<Authorizer, 'requireOrg' | 'requireProject' | 'requireUser' | 'requireAdmin'>;
  access: Pick<ContentAccess, 'grantPaths' | 'node'>;
  findNode(id: string): NodeInfo | null;
  /**
   * Several workers (src/cluster/): called after the check of a request that may change the
   * project (or of an `onOwner` route), before the handler: throws to have it run on the
   * project's owner instead. Absent when one process owns everything.
   */
  owner?: (ctx: Context, projectId: string) => void | Promise<void>;
  /** The owner check runs for reads too (the nodes of a cluster). */
  ownerReads?: boolean;
}

type Input = RouteInput<unknown, unknown, unknown>;
const contentActions = new Set<string>(['content:read', 'content:write']);

/**
 * Builds a group's router from its declarations: validate each declared part, enforce the
 * declared check, then handle. A declaration whose check needs a permission and has none (or
 * the wrong kind of one) fails at start-up, never opens at run time.
 */
export function mountGroup(group: RouteGroup, guards: RouteGuards): Router {
  const router = new Router({ prefix: group.prefix });
  for (const r of group.routes) {
    assertDeclared(group, r);
    const check = checkOf(r, guards);
    router[r.method](r.path, ...(r.multipart ? [r.multipart] : []), async (ctx) => {
      const params = r.params ? parseInput(r.params, ctx.params, 'params') : ctx.params;
      const query = r.query ? parseInput(r.query, ctx.query, 'query') : ctx.query;
      const rawBody = r.bodyFromQuery ? withQueryFields(r.bodyFromQuery(query), ctx.request.body) : ctx.request.body;
      const input: Input = { params, query, body: r.body ? parseInput(r.body, rawBody, 'body') : rawBody };
      const access = await check(ctx, input);
      if (guards.owner && (r.method !== 'get' || r.onOwner || guards.ownerReads)) {
        const projectId = await checkedProject(r, input, access);
        if (projectId) await guards.owner(ctx, projectId);
      }
      await r.handle(ctx, { ...input, access } as Parameters<RouteDeclaration['handle']>[1]);
    });
  }
  return router;
}

/** Fields taken from the query, under those of the body (a body that is not an object is left as it is, for validation to refuse). */
function withQueryFields(fromQuery: Record<string, unknown>, body: unknown): unknown {
  const defined = Object.fromEntries(Object.entries(fromQuery).filter(([, v]) => v !== undefined));
  if (body === undefined || body === null) return defined;
  if (typeof body !== 'object' || Array.isArray(body)) return body;
  return { ...defined, ...(body as Record<string, unknown>) };
}

/** Every route declares its check; the checks on a resource name the permission they need. */
function assertDeclared(group: RouteGroup, r: RouteDeclaration): void {
  const where = `${r.method.toUpperCase()} ${group.prefix}${r.path}`;
  if (!r.authorize) throw new Error(`${where} declares no authorize`);
  const kind = authorizationKind(r.authorize);
  if (!kind) throw new Error(`${where} declares an unknown kind of check`);
  const needsPermission = kind === 'org' || kind === 'project' || kind === 'resource' || kind === 'content' || kind === 'node';
  if (needsPermission && !r.permission) throw new Error(`${where} declares a ${kind} check without a permission`);
  if (!needsPermission && kind !== 'checkedBy' && r.permission) throw new Error(`${where} declares a permission its ${kind} check does not apply`);
  if ((kind === 'content' || kind === 'node') && !contentActions.has(r.permission!)) {
    throw new Error(`${where}: the content door checks content:read or content:write, not ${r.permission}`);
  }
}

/** The declared check as a function of the request: what it found, or a domain error (401, 404 unseen, 403 too little). */
function checkOf(r: RouteDeclaration, guards: RouteGuards): (ctx: Context, input: Input) => unknown {
  const a = r.authorize as RouteAuthorization<Input>;
  const { authorizer, access } = guards;
  if ('public' in a) return () => undefined;
  if ('signedIn' in a || 'checkedBy' in a) return (ctx) => void principalOf(ctx);
  if ('user' in a) return (ctx) => authorizer.requireUser(principalOf(ctx));
  if ('admin' in a) return (ctx) => authorizer.requireAdmin(principalOf(ctx));
  if ('org' in a) return (ctx, input) => authorizer.requireOrg(principalOf(ctx), a.org(input), r.permission as OrgAction);
  if ('node' in a) {
    return async (ctx, input) => {
      const node = guards.findNode(a.node(input));
      const grant = await access.node(principalOf(ctx), node, r.permission as ContentAction, a.project?.(input) ?? undefined);
      return { node: node!, grant };
    };
  }
  if ('resource' in a) {
    return async (ctx, input) => {
      const principal = principalOf(ctx);
      const record = await a.resource(input, principal);
      if (!record) throw notFound(a.name);
      return { ...(await projectAccess(authorizer, principal, projectOf(record), r.permission as ProjectAction, a.name)), record };
    };
  }
  if ('content' in a) {
    return (ctx, input) => {
      const paths = a.paths ? a.paths(input).filter((p): p is string => typeof p === 'string') : [];
      return access.grantPaths(principalOf(ctx), a.content(input), r.permission as ContentAction, paths);
    };
  }
  return (ctx, input) => authorizer.requireProject(principalOf(ctx), a.project(input), r.permission as ProjectAction);
}

/** The project a passed check found, for the routes whose check names one. */
async function checkedProject(r: RouteDeclaration, input: Input, found: unknown): Promise<string | null> {
  const a = r.authorize as RouteAuthorization<Input>;
  if ('node' in a) return (found as { node: NodeInfo }).node.projectId;
  if ('resource' in a) return projectOf((found as { record: ProjectOwned }).record);
  if ('content' in a) return a.content(input);
  if ('project' in a) return a.project(input);
  if ('checkedBy' in a) return (await a.placedIn?.(input)) ?? null;
  return null;
}

/** A record in a project the caller cannot see is "not found" under its own name, not "project not found". */
async function projectAccess(authorizer: RouteGuards['authorizer'], principal: Principal, projectId: string, action: ProjectAction, name: string) {
  try {
    return await authorizer.requireProject(principal, projectId, action);
  } catch (e) {
    if (e instanceof DomainError && e.code === 'NOT_FOUND') throw notFound(name);
    throw e;
  }
}

const projectOf = (record: ProjectOwned) => ('projectId' in record ? record.projectId : record.project_id);
const notFound = (name: string) => new DomainError('NOT_FOUND', `${name} not found.`);

/** The routes the declarations make public, as the authentication middleware asks about them. */
export function publicMatcher(groups: readonly RouteGroup[], basePath: string): (method: string, path: string) => boolean {
  const patterns: { method: string; regexp: RegExp }[] = [];
  for (const g of groups) {
    const router = new Router({ prefix: (g.server ? '' : basePath) + g.prefix });
    for (const r of g.routes) if ('public' in r.authorize) router[r.method](r.path, () => undefined);
    for (const layer of router.stack) for (const method of layer.methods) patterns.push({ method, regexp: layer.regexp });
  }
  return (method, path) => patterns.some((p) => p.method === method && p.regexp.test(path));
}
