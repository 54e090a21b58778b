import type { Settings } from '../../config/settings.ts';
import { withItems } from '../../presenters/items.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { grantOf } from '../../policies/contentAccess.ts';
import type { Publishes } from '../../publish/publishes.ts';
import { presentPublish } from './presenter.ts';
import * as schema from './schemas.ts';

const writeNote =
  'Needs content:write on the node (a key publishes only inside its scope). A publish of a node in the trash, or permanently deleted, answers 404 at its public address until the node is back.';

export interface PublishRouteDeps {
  publishing: { publishes: Publishes };
  /** Public addresses are built on the public URL. */
  settings: Pick<Settings, 'baseUrl'>;
}

/**
 * Publishes (spec 4.10): make a node readable without a credential at `/p/{publish_key}`, list,
 * change (enable, expiry, version pin, slug) and remove them. The public address itself is in
 * publicRoutes.ts.
 */
export function publishRoutes(s: PublishRouteDeps): RouteGroup {
  const p = () => s.publishing.publishes;
  const present = (v: Parameters<typeof presentPublish>[0]) => presentPublish(v, s.settings.baseUrl);
  /** A publish by id: one of a project the caller cannot see is "Publish not found." */
  const publish = { resource: ({ params }: { params: { publish_id: string } }) => p().find(params.publish_id), name: 'Publish' };
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
        authorize: { node: ({ body }) => body.node_id, project: ({ body }) => body.project_id },
        status: 201,
        body: schema.createBody,
        response: schema.publishSchema,
        async handle(ctx, { body, access: { node, grant } }) {
          const view = await p().create(grant, node, {
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
        authorize: { content: ({ query }) => query.project_id },
        query: schema.listQuery,
        response: schema.publishList,
        async handle(ctx, { access: grant }) {
          const views = await p().list(grant);
          ok(ctx, { ...withItems('publishes', views.map(present)), total: views.length });
        },
      }),
      route({
        method: 'get',
        path: '/:publish_id',
        summary: 'One publish',
        permission: 'content:read',
        authorize: publish,
        params: schema.publishParams,
        response: schema.publishSchema,
        handle(ctx, { access }) {
          ok(ctx, present(p().get(grantOf(access, 'content:read'), access.record)));
        },
      }),
      route({
        method: 'patch',
        path: '/:publish_id',
        summary: 'Enable or disable a publish, change its expiry, pin a version (null: the latest) or change its slug',
        description: writeNote,
        permission: 'content:write',
        authorize: publish,
        params: schema.publishParams,
        body: schema.updateBody,
        response: schema.publishSchema,
        async handle(ctx, { body, access }) {
          const view = await p().update(grantOf(access, 'content:write'), access.record, {
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
        authorize: publish,
        params: schema.publishParams,
        response: schema.publishDeleted,
        async handle(ctx, { params, access }) {
          await p().delete(grantOf(access, 'content:write'), access.record);
          ok(ctx, { id: params.publish_id, deleted: true as const }, 'Unpublished');
        },
      }),
    ],
  };
}
