import Router from '@koa/router';
import { parseInput } from '../validate.ts';
import type { RouteGroup } from './declaration.ts';

/** Builds a group's router from its declarations: validate each declared part, then handle. */
export function mountGroup(group: RouteGroup): Router {
  const router = new Router({ prefix: group.prefix });
  for (const r of group.routes) {
    router[r.method](r.path, async (ctx) => {
      const input = {
        params: r.params ? parseInput(r.params, ctx.params, 'params') : ctx.params,
        query: r.query ? parseInput(r.query, ctx.query, 'query') : ctx.query,
        body: r.body ? parseInput(r.body, ctx.request.body, 'body') : ctx.request.body,
      };
      await r.handle(ctx, input);
    });
  }
  return router;
}
