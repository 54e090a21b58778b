import type { Middleware } from 'koa';
import { readJsonBody } from '../jsonBody.ts';
import { replayOf } from '../replay.ts';

const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Routes that read their body themselves, as bytes (a webhook checks a signature over them). */
const rawBodyRoutes: { method: string; pattern: RegExp }[] = [];

export function registerRawBodyRoute(method: string, pattern: RegExp): void {
  rawBodyRoutes.push({ method, pattern });
}

/** Whether this parser reads the body of such a request (JSON routes), rather than the route itself. */
export function parsesBodyOf(method: string, path: string): boolean {
  return PARSED_METHODS.has(method) && !path.startsWith('/git/') && !rawBodyRoutes.some((r) => r.method === method && r.pattern.test(path));
}

/**
 * Parses JSON bodies only (uploads and git traffic stream their raw bodies elsewhere): objects
 * and arrays, up to the configured limit, large ones as they arrive without holding the event
 * loop (src/http/jsonBody.ts). A number JSON.parse would silently alter (`1e400`, integers
 * beyond 2^53) is a 422 naming its field, for every route.
 */
export function jsonBodyParser(limitBytes: number): Middleware {
  return async (ctx, next) => {
    // The method first: reads (most requests) carry no body and need no pattern tested.
    if (!PARSED_METHODS.has(ctx.method)) return next();
    const raw = rawBodyRoutes.some((r) => r.method === ctx.method && r.pattern.test(ctx.path));
    if (!raw && ctx.request.body === undefined && ctx.is('application/json', 'application/*+json')) {
      // Several workers keep a change's body to forward it to the project's owner (cluster/ownerRouting.ts).
      const kept = ctx.state.replayBody as Buffer | undefined;
      ctx.request.body = await readJsonBody(kept ? replayOf(ctx.req, kept) : ctx.req, limitBytes);
    }
    await next();
  };
}
