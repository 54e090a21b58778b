import type { Context, Next } from 'koa';
import { z } from 'zod';
import { asAppError, AppError } from '../../http/errors.ts';
import { runHttpBackend } from '../../remote/httpBackend.ts';
import { DeposedError } from '../replication/replicator.ts';
import { BadShipment, decodeShipment } from '../replication/shipment.ts';
import type { ClusterNode } from './clusterNode.ts';
import { gitPathOf } from './clusterNode.ts';
import { verifiedNode } from './nodeSignature.ts';
import { CATCH_UP_PATH, PROMOTE_PATH, SEAL_PATH, SHIP_PATH } from './replicaHttpClient.ts';

/** The largest shipment a replica reads (objectsBetween ships at most 64 MiB of objects, plus framing). */
const MAX_SHIPMENT_BYTES = 80 * 1024 * 1024;
const PROJECT = /^[A-Za-z0-9_-]{1,128}$/;
const GIT = /^\/internal\/git\/([A-Za-z0-9_-]{1,128})\.git(\/info\/refs|\/git-upload-pack)$/;
const epochCall = z.object({ project: z.string().regex(PROJECT), epoch: z.number().int().min(1) });

/**
 * The node-to-node endpoints under /internal/ (docs/design/cluster.md §5, §6): shipments,
 * catch-ups, seals and promotions of a project's copy, and the primary's repository for a
 * replica's `git fetch`. Only requests another node signed (nodeSignature.ts) get in; to anyone
 * else the whole prefix does not exist.
 */
export function internalApi(node: ClusterNode, dataDir: string) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.path.startsWith('/internal/')) return next();
    const git = GIT.exec(ctx.path);
    const signer = git ? verifiedNode(node.key, ctx.req.headers, 'GIT', gitPathOf(git[1]!)) : verifiedNode(node.key, ctx.req.headers, ctx.method, ctx.path);
    if (!signer) throw new AppError('NOT_FOUND', 'Not found.');
    if (git) return serveGit(ctx, dataDir, git[1]!, git[2]!);
    if (ctx.method !== 'POST') throw new AppError('NOT_FOUND', 'Not found.');
    try {
      ctx.body = { success: true, code: 'OK', message: 'ok', data: await answer(ctx, node) };
    } catch (err) {
      if (err instanceof DeposedError) {
        ctx.status = 409;
        ctx.body = { success: false, code: 'CONFLICT', message: err.message, data: { stale_epoch: (err.details as { epoch: number }).epoch } };
        return;
      }
      if (err instanceof BadShipment) throw new AppError('VALIDATION_ERROR', `Bad shipment: ${err.message}`);
      throw asAppError(err) ?? err;
    }
  };
}

async function answer(ctx: Context, node: ClusterNode): Promise<unknown> {
  switch (ctx.path) {
    case SHIP_PATH:
      return node.replicaService.receive(decodeShipment(await readBody(ctx, MAX_SHIPMENT_BYTES)));
    case CATCH_UP_PATH: {
      const { project, epoch } = parse(await readBody(ctx, 4096));
      return { tips: await node.replicaService.catchUp(project, epoch) };
    }
    case SEAL_PATH: {
      const { project, epoch } = parse(await readBody(ctx, 4096));
      const r = await node.seal(project, epoch);
      if ('staleEpoch' in r) throw new DeposedError(project, r.staleEpoch);
      return r;
    }
    case PROMOTE_PATH: {
      const { project, epoch } = parse(await readBody(ctx, 4096));
      await node.promote(project, epoch);
      return { project, epoch };
    }
    default:
      throw new AppError('NOT_FOUND', 'Not found.');
  }
}

function parse(body: Buffer): z.infer<typeof epochCall> {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body must be JSON.');
  }
  const r = epochCall.safeParse(json);
  if (!r.success) throw new AppError('VALIDATION_ERROR', 'The body must name a project and an epoch.');
  return r.data;
}

async function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes.`);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/** `git upload-pack` over smart HTTP, for a replica's fetch: read only, never a push. */
async function serveGit(ctx: Context, dataDir: string, project: string, rest: string): Promise<void> {
  const upload = rest === '/git-upload-pack' ? ctx.method === 'POST' : (ctx.method === 'GET' && ctx.query.service === 'git-upload-pack');
  if (!upload) throw new AppError('NOT_FOUND', 'Not found.');
  const run = await runHttpBackend({ projectRoot: dataDir, pathInfo: `/${project}.git${rest}`, req: ctx.req, queryString: ctx.querystring, remoteUser: 'cns-node' });
  ctx.status = run.status;
  for (const [k, v] of run.headers) ctx.set(k, v);
  run.body.on('error', () => undefined);
  ctx.body = run.body;
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) run.child.kill('SIGTERM');
  });
  void run.exited.then(() => run.body.end());
}
