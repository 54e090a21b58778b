import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { validationError } from '../errors.ts';
import { findLossyNumber } from '../jsonNumbers.ts';

/**
 * Parses JSON bodies only (uploads and git traffic stream their raw bodies elsewhere), strict
 * (objects and arrays only), up to the configured limit; errors reach the error handler. A
 * number JSON.parse would silently alter (`1e400`, integers beyond 2^53) is a 422 naming its
 * field, for every route.
 */
export function jsonBodyParser(limitBytes: number): Middleware {
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    includeUnparsed: true,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  }) as unknown as Middleware;
  return (ctx, next) =>
    parse(ctx, () => {
      const request = ctx.request as { rawBody?: unknown };
      const raw = request.rawBody;
      if (typeof raw === 'string') {
        // The raw text is kept only for this check (a large body would otherwise stay in memory twice).
        delete request.rawBody;
        delete (ctx.req as { rawBody?: unknown }).rawBody;
        const lossy = findLossyNumber(raw);
        if (lossy) {
          throw validationError(`Invalid body: ${lossy.field} is a number JSON cannot carry exactly (${lossy.literal.slice(0, 40)}).`, [
            { field: lossy.field, message: 'number out of range or beyond 2^53: send it as a string' },
          ]);
        }
      }
      return next();
    });
}
