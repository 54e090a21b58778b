import type { Context, Middleware } from 'koa';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { registerPublicRoute } from '../publicRoutes.ts';
import { DASHBOARD_PAGE_HEADERS } from './dashboardPolicy.ts';

/**
 * The web dashboard (`web/`, built by Vite into `web/dist`), served at `/`. Paths that belong to
 * the service (the API, health, the reference page, published pages, git remotes) are never
 * answered here, so a client route can not shadow them. Any other GET that asks for HTML and
 * names no built file gets index.html: the dashboard routes on the client.
 */
// `internal`: the nodes' own calls and a replica's git fetch from its primary (index.html there breaks the fetch).
const SERVICE_PATHS = '(api|healthz|docs|p|git|internal)(/|$)';
const RESERVED = new RegExp(`^/${SERVICE_PATHS}`);

/** Vite names built files `<name>-<content hash>.<ext>` under assets/: their bytes never change. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

// Static files need no credential; listing them keeps publicRoutes.ts the complete list of what is.
registerPublicRoute('GET', new RegExp(`^/(?!${SERVICE_PATHS})`));

export function webAssets(distDir: string): Middleware {
  const root = normalize(distDir + sep);
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || RESERVED.test(ctx.path)) return next();
    const file = await builtFile(root, ctx.path);
    if (file && ctx.path.startsWith('/assets/')) return send(ctx, await compressed(ctx, file), IMMUTABLE);
    if (file) return send(ctx, file, 'no-cache');
    // A name with an extension is a missing file, except under /projects/, where it is a node's path (a deep link).
    if (!ctx.accepts('html') || (extname(ctx.path) !== '' && !ctx.path.startsWith('/projects/'))) return next();
    const index = await builtFile(root, '/index.html');
    if (!index) return next(); // not built: the usual 404 envelope rather than a blank page
    return send(ctx, index, 'no-cache');
  };
}

interface BuiltFile {
  path: string;
  size: number;
  /** The extension of the file as named in the URL (not of its compressed copy). */
  type: string;
}

async function builtFile(root: string, urlPath: string): Promise<BuiltFile | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const path = normalize(join(root, decoded === '/' ? '/index.html' : decoded));
  if (!path.startsWith(root)) return null; // `..` must not leave the build folder
  try {
    const info = await stat(path);
    return info.isFile() ? { path, size: info.size, type: extname(path) } : null;
  } catch {
    return null;
  }
}

/** The build's brotli or gzip copy (scripts/build-web.ts) when the client takes it. */
async function compressed(ctx: Context, file: BuiltFile): Promise<BuiltFile> {
  ctx.vary('Accept-Encoding');
  for (const [encoding, suffix] of [['br', '.br'], ['gzip', '.gz']] as const) {
    if (ctx.acceptsEncodings(encoding, 'identity') !== encoding) continue;
    try {
      const info = await stat(file.path + suffix);
      ctx.set('Content-Encoding', encoding);
      return { path: file.path + suffix, size: info.size, type: file.type };
    } catch {
      // no compressed copy of this file: try the next encoding, or send it as it is
    }
  }
  return file;
}

function send(ctx: Context, file: BuiltFile, cacheControl: string): void {
  ctx.status = 200;
  ctx.type = TYPES[file.type] ?? 'application/octet-stream';
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (file.type === '.html') ctx.set(DASHBOARD_PAGE_HEADERS);
  // HEAD: headers only (an empty body keeps Koa from turning it into a 204); GET streams the file.
  if (ctx.method === 'HEAD') ctx.body = Buffer.alloc(0);
  else ctx.body = createReadStream(file.path);
  ctx.length = file.size;
}
