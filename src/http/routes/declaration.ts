import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal.ts';
import type { NodeInfo } from '../../content/types.ts';
import type { OrgRole } from '../../domain/roles.ts';
import type { ProjectAccess } from '../../policies/authorize.ts';
import type { ContentGrant } from '../../policies/contentAccess.ts';
import type { ContentAction, OrgAction, ProjectAction } from '../../policies/permissions.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a handler receives: the request's parts, already validated by the declared schemas. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** A record that belongs to one project (a connection, an endpoint, a sync…): its project is what the check is made on. */
export type ProjectOwned = { project_id: string } | { projectId: string };

/**
 * What a route needs before its handler runs. The mount enforces it after validating the input
 * (422 first, then 401/404/403), so a handler never repeats the check; every route declares one.
 * The three kinds that check nothing on an organization or project say why, and the route-table
 * test lists them.
 *
 * - `public`: reachable without a credential (the reason).
 * - `signedIn`: any authenticated caller, user or key; the handler touches no organization or
 *   project on the caller's behalf beyond its own (the reason).
 * - `user`: a signed-in user, not an access key (the reason); access = the user principal.
 * - `admin`: a signed-in user who is an administrator of the service (`users.is_admin`); any
 *   other caller (another user, an access key, an agent) is 403 (the reason); access = the user
 *   principal.
 * - `checkedBy`: a signed-in caller, and the domain method named decides, because no single
 *   organization, project or node is known before it runs (a batch of ids from several projects,
 *   a list by organization or by project, a record found through one of two ids). Kept rare.
 *   A change of a project also names `placedIn`: the project it would change, looked up without
 *   any check and only to run the request on that project's owner (several workers), where the
 *   domain method then decides.
 * - `org`: the organization the route acts on; access = the caller's organization role.
 * - `project`: the project the route acts on; access = the caller's project access.
 * - `resource`: a record that belongs to a project (`name` says what it is: "Connection"); an
 *   unknown id, one the loader hides from this caller (it returns null: another key's agent), or
 *   one in a project the caller cannot see, is "<name> not found."; access = the project access
 *   with the `record`. The loader may be async (a store on the metadata store).
 * - `content`: the content door (src/policies/contentAccess.ts) on a project, with the paths the
 *   request touches (each must lie inside the caller's scope); access = the content grant.
 * - `node`: the content door on a node id (unknown ids and nodes the caller cannot reach are
 *   "Node not found."; with `project`, the node must be in that project); access = `{node, grant}`.
 */
export type RouteAuthorization<I = RouteInput<unknown, unknown, unknown>> =
  | { public: string }
  | { signedIn: string }
  | { user: string }
  | { admin: string }
  | { checkedBy: string; placedIn?: (input: I) => string | null | undefined | Promise<string | null | undefined> }
  | { org: (input: I) => string }
  | { project: (input: I) => string }
  | { resource: (input: I, principal: Principal) => ProjectOwned | null | undefined | Promise<ProjectOwned | null | undefined>; name: string }
  | { content: (input: I) => string; paths?: (input: I) => readonly (string | null | undefined)[] }
  | { node: (input: I) => string; project?: (input: I) => string | null | undefined };

/** The kinds of check, as the route table and the OpenAPI document name them. */
export type AuthorizationKind = 'public' | 'signedIn' | 'user' | 'admin' | 'checkedBy' | 'org' | 'project' | 'resource' | 'content' | 'node';

/** A node looked up by id through the content door, with the grant that reached it. */
export interface NodeAccess {
  node: NodeInfo;
  grant: ContentGrant;
}

/** What the declared check found, handed to the handler as `access`. */
export type AccessOf<A> = A extends { org: unknown }
  ? OrgRole
  : A extends { node: unknown }
    ? NodeAccess
    : A extends { content: unknown }
      ? ContentGrant
      : A extends { resource: (input: never, principal: never) => infer R }
        ? ProjectAccess & { record: NonNullable<Awaited<R>> }
        : A extends { project: unknown }
          ? ProjectAccess
          : A extends { user: unknown } | { admin: unknown }
            ? Extract<Principal, { kind: 'user' }>
            : undefined;

/** The permission a check needs: organization actions on organizations, content actions at the content door. */
type PermissionOf<A> = A extends { org: unknown }
  ? OrgAction
  : A extends { content: unknown } | { node: unknown }
    ? ContentAction
    : A extends { project: unknown } | { resource: unknown }
      ? ProjectAction
      : A extends { checkedBy: unknown }
        ? OrgAction | ProjectAction
        : never;

/**
 * One route, declared once: the router is built from it and the OpenAPI document is generated
 * from it, so the two cannot drift apart. Schemas validate the input (a failure is a 422 naming
 * each field) and describe it; `response` describes `data` of the success envelope.
 */
export interface RouteDeclaration<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  A extends RouteAuthorization<never> = RouteAuthorization<never>,
> {
  method: HttpMethod;
  /** Relative to the group's prefix, in @koa/router syntax (`/:id`, `/*path`). */
  path: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Body fields a client may send as query parameters instead (PuppyOne's upload sends its
   * fields so): what this returns from the validated query is merged under the body (a field in
   * the body wins), before `body` validates the result.
   */
  bodyFromQuery?(query: z.output<Q>): Record<string, unknown>;
  /**
   * The body is multipart/form-data (file uploads) instead of JSON: this middleware reads it
   * into `ctx.request.body` (files streamed to disk) before `body` validates it, and cleans up
   * once the handler is done. The OpenAPI document describes `body` as multipart/form-data.
   */
  multipart?: Middleware;
  /** The schema of `data` in the success envelope. */
  response?: z.ZodType;
  /**
   * The answer is not an envelope but a stream of this media type: Server-Sent Events, the
   * bytes of a file, or a page for a browser (`response` is left out; `description` says what comes).
   */
  streams?: 'text/event-stream' | 'application/octet-stream' | 'text/html';
  /** The success status (200 unless said). */
  status?: 200 | 201 | 202 | 204;
  /** A second success status with the same `data` (a write answers 201 when it created the node, 200 when it changed one). */
  alsoStatus?: 200 | 201 | 202;
  /** The check the mount makes before the handler (see RouteAuthorization). */
  authorize: A;
  /**
   * Runs on the owner of the project its check finds, whatever the method (several workers,
   * src/cluster/): an MCP session's streams live there. Requests that may change a project
   * (every method but GET) run there anyway.
   */
  onOwner?: boolean;
  /** The permission that check needs, as the policy names it (documented as `x-permission`). */
  permission?: PermissionOf<A>;
  handle(ctx: Context, input: RouteInput<z.output<P>, z.output<Q>, z.output<B>> & { access: AccessOf<A> }): unknown;
}

/** A resource's routes under one prefix; `tag` groups them in the API reference. */
export interface RouteGroup {
  prefix: string;
  tag: string;
  /** Mounted outside the API's base path (e.g. `/` for /healthz). */
  server?: string;
  routes: RouteDeclaration[];
}

/** Which kind of check a declaration makes. */
export function authorizationKind(a: RouteAuthorization<never>): AuthorizationKind {
  return Object.keys(a).find((k): k is AuthorizationKind => kinds.has(k as AuthorizationKind))!;
}
const kinds = new Set<AuthorizationKind>(['public', 'signedIn', 'user', 'admin', 'checkedBy', 'org', 'project', 'resource', 'content', 'node']);

/**
 * Declares a route. An identity function whose only job is type inference: the handler's input
 * types and its `access` follow from the schemas and the check declared.
 */
export function route<
  A extends RouteAuthorization<RouteInput<z.output<P>, z.output<Q>, z.output<B>>>,
  P extends z.ZodType = z.ZodType<Record<string, string>>,
  Q extends z.ZodType = z.ZodType<unknown>,
  B extends z.ZodType = z.ZodType<unknown>,
>(declaration: RouteDeclaration<P, Q, B, A>): RouteDeclaration {
  return declaration as unknown as RouteDeclaration;
}
