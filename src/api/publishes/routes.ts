import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { presentPublish } from './presenter.ts';
import * as schema from './schemas.ts';

const writeNote =
  'Needs content:write on the node (a key publishes only inside its scope). A publish of a node in the trash, or permanently deleted, answers 404 at its public address until the node is back.';

/**
 * Publishes (spec 4.10): make a node readable without a credential at `/p/{publish_key}`, list,
 * change (enable, expiry, version pin, slug) and remove them. The public address itself is in
 * publicRoutes.ts.
 */
export function publishRoutes(s: Services): RouteGroup {
  const p = () => s.publishing.publishes;
  const present = (v: Parameters<typeof presentPublish>[0]) => presentPublish(v, s.settings.baseUrl);
  return {
    prefix: '/publishes',
    tag: 'Publishing',
    routes: [
      route({
        method: 'post',
        path: '/',
        summary: 'Publish a node: a public address that serves it without a credential',
        description: `Markdown is served as a sanitized HTML page, json as JSON, files as their bytes, folders as an index page. ${writeNote} A slug already in use is 409; a version that does not exist, or a pin on a folder, 422.`,
        permission: 'content:write',
        status: 201,
        body: schema.createBody,
        response: schema.publishSchema,
        handle(ctx, { body }) {
          const view = p().create(principalOf(ctx), {
            projectId: body.project_id,
            nodeId: body.node_id,
            version: body.version,
            expiresAt: body.expires_at,
            slug: body.slug,
          });
          ok(ctx, present(view), 'Published', 201);
        },
      }),
      route({
        method: 'get',
        path: '/',
        summary: "A project's publishes (those of nodes the caller may read)",
        permission: 'content:read',
        query: schema.listQuery,
        response: schema.publishList,
        handle(ctx, { query }) {
          const views = p().list(principalOf(ctx), query.project_id);
          ok(ctx, { publishes: views.map(present), total: views.length });
        },
      }),
      route({
        method: 'get',
        path: '/:publish_id',
        summary: 'One publish',
        permission: 'content:read',
        params: schema.publishParams,
        response: schema.publishSchema,
        handle(ctx, { params }) {
          ok(ctx, present(p().get(principalOf(ctx), params.publish_id)));
        },
      }),
      route({
        method: 'patch',
        path: '/:publish_id',
        summary: 'Enable or disable a publish, change its expiry, pin a version (null: the latest) or change its slug',
        description: writeNote,
        permission: 'content:write',
        params: schema.publishParams,
        body: schema.updateBody,
        response: schema.publishSchema,
        handle(ctx, { params, body }) {
          const view = p().update(principalOf(ctx), params.publish_id, {
            enabled: body.enabled,
            expiresAt: body.expires_at,
            version: body.version,
            slug: body.slug,
          });
          ok(ctx, present(view), 'Publish updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:publish_id',
        summary: 'Unpublish: the public address answers 404 from now on (the node is not touched)',
        permission: 'content:write',
        params: schema.publishParams,
        response: schema.publishDeleted,
        handle(ctx, { params }) {
          p().delete(principalOf(ctx), params.publish_id);
          ok(ctx, { id: params.publish_id, deleted: true as const }, 'Unpublished');
        },
      }),
    ],
  };
}
