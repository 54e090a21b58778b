import type { Middleware } from 'koa';
import type { Logger } from '../../logging/logger.ts';
import { redactPath } from '../../logging/redact.ts';
import { errorBody } from '../envelope.ts';
import { asAppError } from '../errors.ts';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
}

/**
 * Turns anything thrown below into the error envelope. Client mistakes caught by the body
 * parser (bad JSON, oversize bodies) become 422/413; unknown failures become a bare 500 with
 * the details only in the log.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appError = asAppError(err);
      if (appError) {
        // The operator's side of a 503 for the metadata database: the driver's own words (never the password: pg does not repeat it).
        if (appError.code === 'DATABASE_UNAVAILABLE' || appError.code === 'DATABASE_TIMEOUT') {
          const cause = (err as { cause?: unknown }).cause;
          logger.warn({ request_id: ctx.state.requestId, method: ctx.method, path: redactPath(ctx.path), code: appError.code, cause: cause instanceof Error ? cause.message : undefined }, 'metadata database failed the request');
        }
        ctx.status = appError.status;
        for (const [k, v] of Object.entries(appError.headers)) ctx.set(k, v);
        ctx.body = errorBody(appError.code, appError.message, appError.details);
        return;
      }
      const e = (err ?? {}) as HttpishError;
      const status = e.status ?? e.statusCode;
      if (status === 413 || e.type === 'entity.too.large') {
        ctx.status = 413;
        ctx.body = errorBody('PAYLOAD_TOO_LARGE', 'The request body is larger than this server accepts.');
        return;
      }
      if (status && status >= 400 && status < 500) {
        ctx.status = 422;
        const message = e.type === 'entity.parse.failed' ? 'The request body is not valid JSON.' : `The request could not be read: ${e.message ?? 'invalid request'}.`;
        ctx.body = errorBody('VALIDATION_ERROR', message, [{ field: 'body', message: e.message ?? 'invalid' }]);
        return;
      }
      logger.error({ err, request_id: ctx.state.requestId, method: ctx.method, path: redactPath(ctx.path) }, 'unhandled error');
      ctx.status = 500;
      ctx.body = errorBody('INTERNAL_ERROR', 'Something went wrong on our side. The request id identifies it in the logs.', {
        request_id: ctx.state.requestId,
      });
    }
  };
}
