import { created, ok } from '../../http/envelope.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { WebhooksService } from '../../webhooks/service.ts';
import { presentDelivery, presentHook } from './presenter.ts';
import * as schema from './schemas.ts';

const who =
  'Project admins manage every hook of the project; an access key (kind api) manages the hooks it created, inside its scope; others are 403. A hook acts as its creator: it is sent only changes its creator may read now (a key limited to a folder hears of nothing outside it), and it is disabled (creator_access_ended) once its creator may no longer read the project. Another project\'s hook, or another key\'s, is 404.';

const deliveryNote =
  'A delivery is a POST of a JSON body (event, events, project_id, delivery_id, occurred_at, commit, actor, paths with their versions, paths_total, paths_truncated) with headers X-Cns-Event, X-Cns-Delivery and X-Cns-Signature-256: sha256=<hex HMAC-SHA256 of the raw body under the secret>. One commit is one delivery per hook; a hook gets its deliveries one at a time, in commit order; a failure or a timeout (CNS_WEBHOOK_TIMEOUT_MS) is retried with exponential backoff for CNS_WEBHOOK_RETRY_FOR_S, then the delivery is failed.';

export interface WebhookRouteDeps {
  webhooks: WebhooksService;
}

/** Outgoing webhooks of a project (issue 33): hooks, their deliveries, redelivery and ping. */
export function webhookRoutes(s: WebhookRouteDeps): RouteGroup {
  const w = () => s.webhooks.webhooks;
  const project = { project: ({ params }: { params: { project_id: string } }) => params.project_id };
  return {
    prefix: '/projects',
    tag: 'Webhooks',
    routes: [
      route({
        method: 'post',
        path: '/:project_id/webhooks',
        summary: 'Create a webhook: changes of the project are POSTed to its url, signed with its secret',
        description: `${who} ${deliveryNote} The url passes the outbound guard now (a refused address is 422) and at each attempt. The secret is answered once.`,
        permission: 'content:read',
        authorize: project,
        status: 201,
        params: schema.projectParams,
        body: schema.createBody,
        response: schema.hookWithSecret,
        async handle(ctx, { body, access }) {
          const m = w().manager(access);
          const { hook, secret } = await w().create(m, { url: body.url, events: body.events, pathPrefix: body.path_prefix, active: body.active, secret: body.secret });
          created(ctx, { ...presentHook(hook, 0), secret }, 'Webhook created: keep its secret, it is not shown again');
        },
      }),
      route({
        method: 'get',
        path: '/:project_id/webhooks',
        summary: "A project's webhooks (an access key: the ones it created), with their latest deliveries on request",
        description: who,
        permission: 'content:read',
        authorize: project,
        params: schema.projectParams,
        query: schema.listQuery,
        response: schema.hookList,
        async handle(ctx, { query, access }) {
          const hooks = await w().list(w().manager(access));
          const recent = query.recent > 0 ? await w().recent(hooks.map((h) => h.id), query.recent) : null;
          const presented = await Promise.all(hooks.map(async (h) => presentHook(h, await w().pendingCount(h.id), recent?.get(h.id))));
          ok(ctx, { webhooks: presented, total: hooks.length });
        },
      }),
      route({
        method: 'get',
        path: '/:project_id/webhooks/:hook_id',
        summary: 'One webhook',
        description: who,
        permission: 'content:read',
        authorize: project,
        params: schema.hookParams,
        response: schema.hookSchema,
        async handle(ctx, { params, access }) {
          const hook = await w().get(w().manager(access), params.hook_id);
          ok(ctx, presentHook(hook, await w().pendingCount(hook.id)));
        },
      }),
      route({
        method: 'patch',
        path: '/:project_id/webhooks/:hook_id',
        summary: 'Change a webhook: url, events, path_prefix, active (true also switches a disabled hook back on), or a new secret',
        description: `${who} Deliveries already queued keep the body they were queued with.`,
        permission: 'content:read',
        authorize: project,
        params: schema.hookParams,
        body: schema.updateBody,
        response: schema.hookWithSecret,
        async handle(ctx, { params, body, access }) {
          const { hook, secret } = await w().update(w().manager(access), params.hook_id, {
            url: body.url,
            events: body.events,
            pathPrefix: body.path_prefix,
            active: body.active,
            secret: body.secret,
          });
          ok(ctx, { ...presentHook(hook, await w().pendingCount(hook.id)), secret }, 'Webhook updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:project_id/webhooks/:hook_id',
        summary: 'Delete a webhook and its deliveries (pending ones are not sent)',
        description: who,
        permission: 'content:read',
        authorize: project,
        params: schema.hookParams,
        response: schema.hookDeleted,
        async handle(ctx, { params, access }) {
          await w().delete(w().manager(access), params.hook_id);
          ok(ctx, { id: params.hook_id, deleted: true as const }, 'Webhook deleted');
        },
      }),
      route({
        method: 'get',
        path: '/:project_id/webhooks/:hook_id/deliveries',
        summary: "A webhook's deliveries, newest first: status, attempts, response code, duration, the request and the start of the response",
        description: who,
        permission: 'content:read',
        authorize: project,
        params: schema.hookParams,
        query: schema.deliveriesQuery,
        response: schema.deliveryList,
        async handle(ctx, { params, query, access }) {
          const { items, total } = await w().deliveries(w().manager(access), params.hook_id, query);
          ok(ctx, { deliveries: items.map(presentDelivery), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'post',
        path: '/:project_id/webhooks/:hook_id/deliveries/:delivery_id/redeliver',
        summary: 'Send a delivered or failed delivery again: the same body under a new delivery id (redelivery_of names the first), after what the hook has pending',
        description: `${who} A delivery still pending is 409 (it is retried on its own); a ping is not redelivered (409).`,
        permission: 'content:read',
        authorize: project,
        status: 202,
        params: schema.deliveryParams,
        response: schema.deliverySchema,
        async handle(ctx, { params, access }) {
          const d = await w().redeliver(w().manager(access), params.hook_id, params.delivery_id);
          ok(ctx, presentDelivery(d), 'Redelivery queued', 202);
        },
      }),
      route({
        method: 'post',
        path: '/:project_id/webhooks/:hook_id/ping',
        summary: 'Send a `ping` event now, once (whatever the hook subscribed to, active or not), and answer how it went',
        description: `${who} The answer is the recorded delivery: status delivered or failed, the response code and duration.`,
        permission: 'content:read',
        authorize: project,
        params: schema.hookParams,
        response: schema.deliverySchema,
        async handle(ctx, { params, access }) {
          const d = await w().ping(w().manager(access), params.hook_id);
          ok(ctx, presentDelivery(d), d.status === 'delivered' ? 'Ping delivered' : 'Ping failed');
        },
      }),
    ],
  };
}
