// The JSON body parser (src/http/middleware/bodyParser.ts) sets `ctx.request.body`.
import 'koa';

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
