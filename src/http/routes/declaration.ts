import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import type { OrgRole } from '../../domain/roles.ts';
import type { ProjectAccess } from '../../policies/authorize.ts';
import type { OrgAction, ProjectAction } from '../../policies/permissions.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a handler receives: the request's parts, already validated by the declared schemas. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** The kinds of resource a route's permission can be declared on. */
export type AuthorizedOn = 'org' | 'project';

/**
 * Which organization or project the route's `permission` applies to, read from the validated
 * input: `{ org: (input) => id }` or `{ project: (input) => id }`. The mount asks the authorizer
 * before the handler runs (404 for what the caller cannot see, 403 for too little permission),
 * so a handler never repeats the check.
 */
export type RouteAuthorization<K extends AuthorizedOn = AuthorizedOn, I = RouteInput<unknown, unknown, unknown>> = { [k in K]: (input: I) => string };

/** What the declared authorization found: the caller's organization role, or its project access. */
export type AccessOf<K> = [K] extends [never] ? undefined : [K] extends ['org'] ? OrgRole : [K] extends ['project'] ? ProjectAccess : OrgRole | ProjectAccess;

/** With `authorize`, the permission must be an action of the matrix for that kind of resource. */
type PermissionOf<K> = [K] extends [never] ? string : [K] extends ['org'] ? OrgAction : [K] extends ['project'] ? ProjectAction : OrgAction | ProjectAction;

/**
 * One route, declared once: the router is built from it and the OpenAPI document is generated
 * from it, so the two cannot drift apart. Schemas validate the input (a failure is a 422 naming
 * each field) and describe it; `response` describes `data` of the success envelope.
 */
export interface RouteDeclaration<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  K extends AuthorizedOn = AuthorizedOn,
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
  /** The permission the route needs, as the policy names it (documented as `x-permission`). */
  permission?: PermissionOf<K>;
  /** The organization or project `permission` is checked on, before the handler (see RouteAuthorization). */
  authorize?: RouteAuthorization<K, RouteInput<z.output<P>, z.output<Q>, z.output<B>>>;
  /** Reachable without a credential (still listed in src/http/publicRoutes.ts). */
  public?: boolean;
  handle(ctx: Context, input: RouteInput<z.output<P>, z.output<Q>, z.output<B>> & { access: AccessOf<K> }): unknown;
}

/** A resource's routes under one prefix; `tag` groups them in the API reference. */
export interface RouteGroup {
  prefix: string;
  tag: string;
  /** Mounted outside the API's base path (e.g. `/` for /healthz). */
  server?: string;
  routes: RouteDeclaration[];
}

/**
 * Declares a route. An identity function whose only job is type inference: the handler's input
 * types follow from the schemas given.
 */
export function route<
  P extends z.ZodType = z.ZodType<Record<string, string>>,
  Q extends z.ZodType = z.ZodType<unknown>,
  B extends z.ZodType = z.ZodType<unknown>,
  K extends AuthorizedOn = never,
>(declaration: RouteDeclaration<P, Q, B, K>): RouteDeclaration {
  return declaration as unknown as RouteDeclaration;
}
