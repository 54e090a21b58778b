import type { Context } from 'koa';

/**
 * Answers with the success envelope: `{success: true, code: 0, data, message}`. `code` is 0 on
 * success and the error code string on errors, because clients written for the service the
 * spec comes from treat any `code` other than 0 as an error.
 */
export function ok(ctx: Context, data: unknown, message = 'OK', status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, code: 0, data, message };
}

export function created(ctx: Context, data: unknown, message = 'Created'): void {
  ok(ctx, data, message, 201);
}

export interface ErrorBody {
  success: false;
  code: string;
  data: null;
  message: string;
  error: { code: string; details: unknown };
}

export function errorBody(code: string, message: string, details: unknown = null): ErrorBody {
  return { success: false, code, data: null, message, error: { code, details } };
}
