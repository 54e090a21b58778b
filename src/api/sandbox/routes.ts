import type { ContentStore } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { SandboxEndpoint } from '../../sandbox/endpoints/sandboxEndpoints.ts';
import type { SandboxService } from '../../sandbox/service.ts';
import { endpointChanges, endpointInput, endpointParams, nodeBoundRoutes } from '../shared/nodeBoundRoutes.ts';
import { presentEndpoint } from './presenter.ts';
import * as schema from './schemas.ts';

/** What the sandbox routes use: the endpoints, the runtime they name, and nodes by id (by-node). */
export interface SandboxRouteServices {
  sandbox: Pick<SandboxService, 'endpoints' | 'executor'>;
  content: Pick<ContentStore, 'findById'>;
}

/**
 * Sandbox endpoints (spec 4.9, issue 12): managing them needs keys:manage on their project;
 * `exec` takes the endpoint's own key or the token of a user who may write the project.
 */
export function sandboxRoutes(s: SandboxRouteServices): RouteGroup {
  const endpoints = () => s.sandbox.endpoints;
  const present = (e: SandboxEndpoint) => presentEndpoint(e, s.sandbox.executor.runtime);
  return {
    prefix: '/sandbox-endpoints',
    tag: 'Sandbox endpoints',
    routes: [
      ...nodeBoundRoutes({
        noun: 'sandbox endpoint',
        listKey: 'sandbox_endpoints',
        service: endpoints,
        findNode: (id) => s.content.findById(id),
        present,
        withKey: ({ endpoint, key }) => ({ sandbox_endpoint: present(endpoint), key }),
        schemas: { endpoint: schema.endpointSchema, withKey: schema.endpointWithKey, create: schema.createEndpointBody, update: schema.updateEndpointBody },
        create: (principal, body) =>
          endpoints().create(principal, { ...endpointInput(body), limits: body.limits }),
        update: (principal, endpoint, body) =>
          endpoints().update(principal, endpoint, { ...endpointChanges(body), limits: body.limits }),
        words: {
          get: 'a sandbox endpoint (with the runtime that runs its commands)',
          update: "a sandbox endpoint's name, folder, mode, status or limits",
        },
      }),
      route({
        method: 'post',
        path: '/:endpoint_id/exec',
        summary: "Run a command over the endpoint's folder; what it changes is written back as one version",
        description:
          'The folder at the current version is the working directory. No network, read-only system folders, an unprivileged user, ' +
          'limits on time, memory, processes, output (1 MiB per stream) and disk. Created, changed and deleted files become one commit ' +
          'attributed to the endpoint (its own key) or the calling user; changes made meanwhile are merged three ways, and a conflict writes nothing.',
        // No project check fits both callers: the endpoint's own key, whatever its mode (any other key,
        // of any project, is 403), or a user with content:write (404 for one who cannot see the project).
        authorize: {
          checkedBy: "the endpoint's own key or a user who may write its project: SandboxEndpoints.exec decides",
          // What the command changes is written back to the endpoint's project: it runs on that project's owner.
          placedIn: async ({ params }) => (await endpoints().find(params.endpoint_id))?.connection.project_id,
        },
        params: endpointParams,
        body: schema.execBody,
        response: schema.execResult,
        async handle(ctx, { params, body }) {
          const { endpoint: _endpoint, ...result } = await endpoints().exec(principalOf(ctx), params.endpoint_id, {
            command: body.command,
            timeoutS: body.timeout_s,
            stdin: body.stdin,
          });
          const message = result.conflicts.length
            ? 'The command ran, but its changes conflict with changes made meanwhile: nothing was written'
            : result.version !== null
              ? `The command ran; its changes are version ${result.version}`
              : 'The command ran; nothing was written';
          ok(ctx, result, message);
        },
      }),
    ],
  };
}
