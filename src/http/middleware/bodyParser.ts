import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';

/**
 * Parses JSON bodies only (uploads and git traffic stream their raw bodies elsewhere), strict
 * (objects and arrays only), up to the configured limit; errors reach the error handler.
 */
export function jsonBodyParser(limitBytes: number): Middleware {
  return koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  }) as unknown as Middleware;
}
