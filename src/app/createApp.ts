import { puppyOneCompat } from '../presenters/compat.ts';
import Koa from 'koa';
import { fileURLToPath } from 'node:url';
import { feedAccessWatch } from '../api/events/routes.ts';
import { API_PREFIX, apiRouter, routeGuards } from './routes.ts';
import { referencePage } from '../http/routes/referencePage.ts';
import { mountGroup } from '../http/routes/mount.ts';
import { gitRemote } from '../remote/gitRemote.ts';
import { nodeFetch } from '../remote/nodeFetch.ts';
import { healthRoutes } from '../api/health/routes.ts';
import { authenticate } from '../http/middleware/authenticate.ts';
import { jsonBodyParser } from '../http/middleware/bodyParser.ts';
import { errorHandler } from '../http/middleware/errorHandler.ts';
import { notFoundFallback } from '../http/middleware/notFound.ts';
import { callerKey, rateLimit } from '../http/middleware/rateLimit.ts';
import { requestId } from '../http/middleware/requestId.ts';
import { requestLogger } from '../http/middleware/requestLogger.ts';
import { webAssets } from '../http/middleware/webAssets.ts';
import { publicRoutes } from '../http/publicRoutes.ts';
import { mcpGate } from '../api/mcp/serverRoutes.ts';
import { countAccess } from '../api/analytics/countAccess.ts';
import { publicPublishing } from '../api/publishes/publicRoutes.ts';
import type { Services } from './services.ts';

/**
 * The HTTP application: small middlewares in a fixed order. Credentials and rate limits are
 * checked before a body is read, so an anonymous or throttled caller cannot make us parse it.
 */
export function createApp(s: Services): Koa {
  const app = new Koa();
  app.silent = true; // the error handler logs; Koa's default printer would duplicate it
  const guards = routeGuards(s);
  const health = mountGroup(healthRoutes(s), guards);
  // The API's declarations (/healthz included) say which routes are public.
  const { router: api, isPublic } = apiRouter(s);
  const isPublicRoute = publicRoutes(isPublic);
  const reference = referencePage(`${API_PREFIX}/openapi.json`);
  // PuppyOne's duplicate field names, only for a service that serves its clients (presenters/compat.ts).
  if (s.settings.puppyOneCompat) app.use(puppyOneCompat());
  app
    .use(requestId())
    .use(requestLogger(s.logger))
    .use(errorHandler(s.logger))
    .use(notFoundFallback())
    // Several workers: a change of a project runs on the worker that owns it (src/cluster/).
    .use(s.cluster?.middleware ?? ((_ctx, next) => next()))
    .use(health.routes())
    .use(reference.routes())
    // The web dashboard's static files (web/dist): public, and never for the service's own paths.
    .use(webAssets(fileURLToPath(new URL('../../web/dist', import.meta.url))))
    // Published pages (GET /api/v1/p/…) are public: served before the credential chain, like /healthz.
    .use(publicPublishing(s, guards))
    // Git remotes authenticate themselves (Basic challenge) and stream raw bodies: before both.
    .use(gitRemote(s.node ? { ...s, mayWrite: s.node.mayWrite } : s))
    // A cluster node's replicas fetch from it with git, signed by their node (src/cluster/nodes/).
    .use(s.node ? nodeFetch(s.node.key, s.settings.dataDir) : (_ctx, next) => next())
    // MCP servers know their endpoint: a paused endpoint's key is 403, a deleted endpoint 404 (before the 401 of unknown keys).
    .use(mcpGate(s))
    .use(authenticate(s.authenticator, isPublicRoute, s.csrfTokens))
    // Usage analytics: one Map increment per authenticated request, written in batches (src/analytics/).
    .use(countAccess(s.analytics.counter))
    .use(rateLimit(s.rateLimiter, callerKey))
    .use(jsonBodyParser(s.settings.bodyLimitBytes))
    .use(feedAccessWatch(s))
    .use(api.routes())
    .use(api.allowedMethods());
  return app;
}
