import { errorStatus } from '../../http/errors.ts';
import type { Context } from 'koa';
import type { Principal } from '../../auth/principal.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { CallbackFailed, type ConnectionInfo, type OAuthService } from '../../platform/oauth/oauthService.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { sendCallbackPage } from './callbackPage.ts';
import { presentConnection, presentDisconnect } from './presenter.ts';
import * as schema from './schemas.ts';

export interface OAuthRouteDeps {
  oauth: { service: OAuthService };
  authorizer: Pick<Authorizer, 'requireUser'>;
}

/**
 * OAuth and token connections per project (spec 4.10). Connecting and disconnecting need a user
 * who may write the project; status needs read. The tokens are never in an answer.
 */
export function oauthRoutes(s: OAuthRouteDeps): RouteGroup {
  const oauth = s.oauth.service;
  /** Beyond the project check: a connection is made by a person (its tokens act for them), never by a key. */
  const user = (access: { principal: Principal }) => s.authorizer.requireUser(access.principal);
  /** 201 when the project had no connection to the provider, 200 when one was replaced. */
  const answer = (ctx: Context, r: { info: ConnectionInfo; created: boolean }, message: string) =>
    ok(ctx, presentConnection(r.info), message, r.created ? 201 : 200);

  return {
    prefix: '/oauth',
    tag: 'OAuth',
    routes: [
      route({
        method: 'get',
        path: '/callback',
        summary: 'Where the provider sends the browser back (no credential: the signed state is the authority)',
        description:
          'Not an envelope: a small HTML page saying whether the connection was made, which then sends the browser to the `redirect_uri` ' +
          'given to authorize (with `oauth=connected|error`, `provider` and, on failure, `error` in its query). A state is valid for 10 minutes ' +
          'and accepted once; a tampered, expired or reused state, or a code the provider refuses, is an error page (422), a provider that ' +
          'cannot be reached 502.',
        authorize: { public: 'the browser comes back from the provider without our credential: the signed, single-use state is the authority' },
        streams: 'text/html',
        query: schema.callbackQuery,
        async handle(ctx, { query }) {
          try {
            const r = await oauth.callback(query);
            const name = r.info.provider.displayName;
            const account = r.info.connection?.account;
            sendCallbackPage(ctx, {
              ok: true,
              status: 200,
              title: `${name} connected`,
              message: `The project is now connected to ${name}${account ? ` as ${account}` : ''}.`,
              redirectTo: r.redirectAfter,
              params: { oauth: 'connected', provider: r.info.provider.id },
            });
          } catch (err) {
            if (!(err instanceof CallbackFailed)) throw err;
            sendCallbackPage(ctx, {
              ok: false,
              status: errorStatus[err.error.code],
              title: 'The connection was not made',
              message: err.error.message,
              redirectTo: err.redirectAfter,
              params: { oauth: 'error', error: err.error.code },
            });
          }
        },
      }),
      route({
        method: 'get',
        path: '/:provider/authorize',
        summary: 'The provider\'s authorization URL for a project (signed state, PKCE where supported)',
        description:
          'Send the browser to `authorization_url`; the provider returns it to `GET /oauth/callback` (the `redirect_uri` of the answer, to register ' +
          'with the OAuth app). `redirect_uri` in the query is where the browser goes after that: a path or an address on this service\'s origin ' +
          '(anything else is 422). An unconfigured provider is 422 naming its two settings.',
        permission: 'content:write',
        authorize: { project: ({ query }) => query.project_id },
        params: schema.providerParams,
        query: schema.authorizeQuery,
        response: schema.authorizeAnswer,
        async handle(ctx, { params, query, access }) {
          const { id } = user(access);
          const r = await oauth.authorize(id, query.project_id, params.provider, query.redirect_uri);
          ok(ctx, { provider: params.provider, project_id: query.project_id, authorization_url: r.authorizationUrl, redirect_uri: oauth.callbackUrl(), expires_at: r.expiresAt });
        },
      }),
      route({
        method: 'post',
        path: '/:provider/callback',
        summary: 'Complete an authorization whose redirect the client handled itself',
        description:
          'The `code` and `state` the provider sent; only the user who started the authorization may complete it (403 otherwise), ' +
          'and only while they may still write the project the state names.',
        authorize: { user: "the state names the project; the service checks that its user is the caller and may still write the project" },
        params: schema.providerParams,
        body: schema.callbackBody,
        response: schema.connectionSchema,
        status: 201,
        alsoStatus: 200,
        async handle(ctx, { params, body, access: { id } }) {
          try {
            answer(ctx, await oauth.callback(body, id, params.provider), 'Connected');
          } catch (err) {
            throw err instanceof CallbackFailed ? err.error : err;
          }
        },
      }),
      route({
        method: 'get',
        path: '/:provider/status',
        summary: "A project's connection to the provider",
        permission: 'project:read',
        authorize: { project: ({ query }) => query.project_id },
        params: schema.providerParams,
        query: schema.projectQuery,
        response: schema.connectionSchema,
        async handle(ctx, { params, query }) {
          ok(ctx, presentConnection(await oauth.status(query.project_id, params.provider)));
        },
      }),
      route({
        method: 'post',
        path: '/:provider/token',
        summary: 'Connect with a personal or integration token (checked with the provider first)',
        description:
          'GitHub: a personal access token; Notion: an internal integration token; Linear: a personal API key; Airtable: a personal access token. ' +
          'A token the provider refuses is 422 with its words, and nothing is stored.',
        permission: 'content:write',
        authorize: { project: ({ body }) => body.project_id },
        params: schema.providerParams,
        body: schema.tokenBody,
        response: schema.connectionSchema,
        status: 201,
        alsoStatus: 200,
        async handle(ctx, { params, body, access }) {
          const { id } = user(access);
          answer(ctx, await oauth.connectToken(id, body.project_id, params.provider, body.token), 'Connected');
        },
      }),
      route({
        method: 'delete',
        path: '/:provider/disconnect',
        summary: 'Disconnect: revoke at the provider where it can, delete the tokens, pause the syncs that used them',
        permission: 'content:write',
        authorize: { project: ({ query }) => query.project_id },
        params: schema.providerParams,
        query: schema.projectQuery,
        response: schema.disconnectAnswer,
        async handle(ctx, { params, query, access }) {
          user(access);
          const outcome = await oauth.disconnect(query.project_id, params.provider);
          ok(ctx, presentDisconnect(params.provider, query.project_id, outcome), 'Disconnected');
        },
      }),
    ],
  };
}
