import type { Context, Next } from 'koa';
import { gitPathOf } from '../cluster/nodes/clusterNode.ts';
import { verifiedNode } from '../cluster/nodes/nodeSignature.ts';
import { runHttpBackend } from './httpBackend.ts';

const GIT = /^\/internal\/git\/([A-Za-z0-9_-]{1,128})\.git(\/info\/refs|\/git-upload-pack)$/;

/**
 * A primary's repository for its replicas' `git fetch` (catch-up, src/cluster/replication/catchUp.ts):
 * `git upload-pack` over smart HTTP at /internal/git/<project>.git, read only, for requests
 * another node of the cluster signed for that repository. To anyone else it does not exist.
 */
export function nodeFetch(key: Buffer, dataDir: string) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.path.startsWith('/internal/git/')) return next();
    const m = GIT.exec(ctx.path);
    const upload = m && (m[2] === '/git-upload-pack' ? ctx.method === 'POST' : ctx.method === 'GET' && ctx.query.service === 'git-upload-pack');
    if (!m || !upload || !verifiedNode(key, ctx.req.headers, 'GIT', gitPathOf(m[1]!))) {
      ctx.status = 404;
      ctx.body = { success: false, code: 'NOT_FOUND', message: 'Not found.', data: null };
      return;
    }
    const run = await runHttpBackend({ projectRoot: dataDir, pathInfo: `/${m[1]}.git${m[2]}`, req: ctx.req, queryString: ctx.querystring, remoteUser: 'cns-node' });
    ctx.status = run.status;
    for (const [k, v] of run.headers) ctx.set(k, v);
    run.body.on('error', () => undefined);
    ctx.body = run.body;
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) run.child.kill('SIGTERM');
    });
    void run.exited.then(() => run.body.end());
  };
}
