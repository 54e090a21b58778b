import type { Context, Next } from 'koa';
import { z } from 'zod';
import { asAppError, AppError } from '../errors.ts';
import { DeposedError } from '../../cluster/replication/replicator.ts';
import { BadShipment, decodeShipment } from '../../cluster/replication/shipment.ts';
import type { ClusterNode } from '../../cluster/nodes/clusterNode.ts';
import { NODE_SIG_HEADER, verifiedNode } from '../../cluster/nodes/nodeSignature.ts';
import { CATCH_UP_PATH, DROP_COPY_PATH, HANDOFF_PATH, INDEXED_PATH, PROMOTE_PATH, SEAL_PATH, SHIP_PATH, SYNC_COPY_PATH, signedCall } from '../../cluster/nodes/replicaHttpClient.ts';
import { dropCopy, handOff, indexedCopy, syncCopy } from '../../cluster/nodes/copySteps.ts';

/** The largest shipment a replica reads (objectsBetween ships at most 64 MiB of objects, plus framing). */
const MAX_SHIPMENT_BYTES = 80 * 1024 * 1024;
const PROJECT = /^[A-Za-z0-9_-]{1,128}$/;
const epochCall = z.object({ project: z.string().regex(PROJECT), epoch: z.number().int().min(1) });
const moveCall = epochCall.extend({ node: z.string().regex(/^[a-z0-9-]{1,32}$/) });

/**
 * The node-to-node endpoints under /internal/v1/ (docs/design/cluster.md §5, §6): shipments,
 * catch-ups, seals and promotions of a project's copy (the primary's repository for a replica's
 * `git fetch` is remote/nodeFetch.ts). Only requests another node signed (nodeSignature.ts) get
 * in; to anyone else the whole prefix does not exist.
 */
export function internalApi(node: ClusterNode) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.path.startsWith('/internal/v1/')) return next();
    // Unsigned callers are turned away before their body is read; the signature covers the body too.
    if (ctx.method !== 'POST' || typeof ctx.req.headers[NODE_SIG_HEADER] !== 'string') throw new AppError('NOT_FOUND', 'Not found.');
    const body = await readBody(ctx, ctx.path === SHIP_PATH ? MAX_SHIPMENT_BYTES : 4096);
    if (!verifiedNode(node.key, ctx.req.headers, ctx.method, signedCall(ctx.path, body))) throw new AppError('NOT_FOUND', 'Not found.');
    try {
      ctx.body = { success: true, code: 'OK', message: 'ok', data: await answer(ctx.path, body, node) };
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

async function answer(path: string, body: Buffer, node: ClusterNode): Promise<unknown> {
  switch (path) {
    case SHIP_PATH:
      return node.replicaService.receive(decodeShipment(body));
    case CATCH_UP_PATH: {
      const { project, epoch } = parse(body);
      return { tips: await node.replicaService.catchUp(project, epoch) };
    }
    case SEAL_PATH: {
      const { project, epoch } = parse(body);
      const r = await node.seal(project, epoch);
      if ('staleEpoch' in r) throw new DeposedError(project, r.staleEpoch);
      return r;
    }
    case PROMOTE_PATH: {
      const { project, epoch } = parse(body);
      await node.promote(project, epoch);
      return { project, epoch };
    }
    case SYNC_COPY_PATH: {
      const { project, epoch, node: to } = parse(body, moveCall);
      return syncCopy(node, project, epoch, to);
    }
    case HANDOFF_PATH: {
      const { project, epoch, node: to } = parse(body, moveCall);
      return handOff(node, project, epoch, to);
    }
    case DROP_COPY_PATH:
      return dropCopy(node, parse(body).project);
    case INDEXED_PATH:
      return indexedCopy(node, parse(body).project);
    default:
      throw new AppError('NOT_FOUND', 'Not found.');
  }
}

function parse(body: Buffer): z.infer<typeof epochCall>;
function parse<S extends z.ZodType>(body: Buffer, schema: S): z.infer<S>;
function parse(body: Buffer, schema: z.ZodType = epochCall): unknown {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body must be JSON.');
  }
  const r = schema.safeParse(json);
  if (!r.success) throw new AppError('VALIDATION_ERROR', 'The body must name a project and an epoch (and a node, for a move).');
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

