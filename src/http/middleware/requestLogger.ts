import type { Middleware } from 'koa';
import type { Logger } from '../../logging/logger.ts';
import { redactPath } from '../../logging/redact.ts';

/** Logs each request as one structured line once the response is finished (or aborted). */
export function requestLogger(logger: Logger): Middleware {
  return async (ctx, next) => {
    // Below the info level (CNS_LOG_LEVEL=warn) the line would be dropped: build nothing for it.
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const log = () => {
        const principal = ctx.state.principal as { kind: string; id: string } | undefined;
        logger.info(
          {
            request_id: ctx.state.requestId,
            method: ctx.method,
            path: redactPath(ctx.path),
            status: ctx.status,
            duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
            principal: principal ? `${principal.kind}:${principal.id}` : undefined,
          },
          'request',
        );
      };
      // Streamed bodies finish later than the middleware chain; log when the socket is done.
      if (ctx.res.writableFinished || !ctx.respond) log();
      else ctx.res.once('close', log);
    }
  };
}
