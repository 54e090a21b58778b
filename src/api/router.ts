import Router from '@koa/router';
import type { Services } from '../app/services.ts';
import { authRoutes } from './auth/routes.ts';

export const API_PREFIX = '/api/v1';

/**
 * Every resource's router, mounted under /api/v1. Each resource lives in its own folder with
 * its routes, request schemas and presenter.
 */
export function apiRouter(s: Services): Router {
  const api = new Router({ prefix: API_PREFIX });
  const resources: Router[] = [authRoutes(s)];
  for (const r of resources) api.use(r.routes(), r.allowedMethods());
  return api;
}
