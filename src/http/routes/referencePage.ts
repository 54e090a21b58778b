import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';

/** The bundled files of swagger-ui-dist that the page uses: served from the package, no CDN. */
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const page = (specUrl: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Content Node Service API</title>
<link rel="icon" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="reference" data-spec-url="${specUrl}"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so the page works under a strict Content-Security-Policy.
const init = `const el = document.getElementById('reference');
window.ui = SwaggerUIBundle({ url: el.dataset.specUrl, domNode: el, deepLinking: true, persistAuthorization: false });
`;

/** GET /docs: the API reference page for the OpenAPI document at `specUrl`. */
export function referencePage(specUrl: string): Router {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const router = new Router({ prefix: '/docs' });
  const csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'";
  router.get('/', (ctx) => {
    ctx.set('Content-Security-Policy', csp);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(specUrl);
  });
  router.get('/init.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = init;
  });
  router.get('/:asset', async (ctx, next) => {
    const type = assets[ctx.params.asset!];
    if (!type) return next();
    let bytes = cache.get(ctx.params.asset!);
    if (!bytes) {
      bytes = await readFile(join(dir, ctx.params.asset!));
      cache.set(ctx.params.asset!, bytes);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = bytes;
  });
  return router;
}
