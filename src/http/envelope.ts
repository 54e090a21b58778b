import type { Context } from 'koa';

/** Answers with the success envelope: `{success: true, data, message}`. */
export function ok(ctx: Context, data: unknown, message = 'OK', status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, data, message };
}

export function created(ctx: Context, data: unknown, message = 'Created'): void {
  ok(ctx, data, message, 201);
}

export interface ErrorBody {
  success: false;
  data: null;
  message: string;
  error: { code: string; details: unknown };
}

export function errorBody(code: string, message: string, details: unknown = null): ErrorBody {
  return { success: false, data: null, message, error: { code, details } };
}
