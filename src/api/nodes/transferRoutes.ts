import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { newNodeId } from '../../content/contentStore.ts';
import { sendSource } from '../../http/byteRange.ts';
import { created, ok } from '../../http/envelope.ts';
import { AppError, conflict, notFound, validationError } from '../../http/errors.ts';
import { registerPublicRoute } from '../../http/publicRoutes.ts';
import { parseInput } from '../../http/validate.ts';
import { NodeGuard } from './nodeAccess.ts';
import { DOWNLOAD_TTL_SECONDS, PresignedTokens, UPLOAD_TTL_SECONDS } from './presigned.ts';
import { presentNode } from './presenter.ts';
import * as schema from './schemas.ts';

// The presigned addresses carry their own signed grant instead of a bearer credential.
registerPublicRoute('PUT', /^\/api\/v1\/nodes\/upload\/[^/]+$/);
registerPublicRoute('GET', /^\/api\/v1\/nodes\/download\/[^/]+$/);

const tooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `Files up to ${limit} bytes can be uploaded.`, { limit });

/**
 * Uploads and downloads through presigned addresses served by this service. An upload address
 * is limited to the declared size and to the node id announced with it; its PUT streams the
 * body into a git blob (memory stays bounded) and commits it as a `file` node, one version.
 * It is single-use: the announced id exists once the upload is committed, and a PUT in flight
 * holds it. A download address pins one version of a node and serves it with Range support.
 */
export function nodeTransferRoutes(s: Services): Router {
  const router = new Router({ prefix: '/nodes' });
  const store = s.content;
  const guard = new NodeGuard(s);
  const tokens = new PresignedTokens(s.signingSecret);
  const inFlight = new Set<string>();
  const address = (path: string) => `${s.settings.baseUrl}/api/v1/nodes/${path}`;

  router.post('/upload', async (ctx) => {
    const body = parseInput(schema.uploadBody, ctx.request.body, 'body');
    if (body.size > s.settings.maxUploadBytes) throw tooLarge(s.settings.maxUploadBytes);
    const caller = guard.project(ctx, body.project_id, 'content:write');
    const parent = guard.parent(caller, body.parent_id);
    const path = parent.path === '' ? body.name : `${parent.path}/${body.name}`;
    guard.requirePath(caller, path);
    if (store.findByPath(caller.projectId, path)) throw conflict(`${path} already exists.`, { path });
    const nodeId = newNodeId();
    const token = await tokens.signUpload({ projectId: caller.projectId, nodeId, parentId: parent.id, name: body.name, size: body.size, actor: caller.actor });
    created(ctx, {
      upload_url: address(`upload/${token}`),
      method: 'PUT',
      node_id: nodeId,
      path,
      size: body.size,
      expires_in: UPLOAD_TTL_SECONDS,
      max_size: s.settings.maxUploadBytes,
    }, 'PUT the file bytes to upload_url');
  });

  router.put('/upload/:token', async (ctx) => {
    const grant = await tokens.verifyUpload(String(ctx.params.token));
    if (inFlight.has(grant.nodeId) || store.findById(grant.nodeId)) throw new AppError('FORBIDDEN', 'This upload address has already been used.');
    const declared = ctx.get('Content-Length');
    if (declared !== '' && Number(declared) > grant.size) throw tooLarge(grant.size);
    if (declared !== '' && Number(declared) < grant.size) {
      throw validationError(`The body has ${declared} bytes; ${grant.size} were declared.`, [{ field: 'body', message: 'size differs from the declared size' }]);
    }
    inFlight.add(grant.nodeId);
    try {
      const blobId = await store.writeBlobStream(grant.projectId, ctx.req, grant.size);
      const parentPath = grant.parentId === null ? '' : store.getById(grant.projectId, grant.parentId).path;
      const path = parentPath === '' ? grant.name : `${parentPath}/${grant.name}`;
      const result = await store.commit(grant.projectId, grant.actor, [{ op: 'writeBlob', id: grant.nodeId, path, blobId, size: grant.size }], {
        message: `upload ${grant.name}`,
      });
      created(ctx, { ...presentNode(result.nodes.find((n) => n.id === grant.nodeId) ?? store.getById(grant.projectId, grant.nodeId)), project_version: result.projectVersion }, 'Uploaded');
    } finally {
      inFlight.delete(grant.nodeId);
    }
  });

  router.get('/download/:token', async (ctx) => {
    const grant = await tokens.verifyDownload(String(ctx.params.token));
    const node = store.getById(grant.projectId, grant.nodeId);
    const version = store.getVersion(grant.projectId, { id: node.id }, grant.version);
    if (!version.blobId) throw notFound('Content');
    const blob = await store.openBlob(grant.projectId, version.blobId);
    const name = version.path.slice(version.path.lastIndexOf('/') + 1);
    sendSource(ctx, { size: blob.size, slice: blob.stream }, { etag: version.blobId, contentType: node.mimeType ?? 'application/octet-stream', filename: name });
  });

  router.get('/:nodeId/download', async (ctx) => {
    const { nodeId } = parseInput(schema.nodeParams, ctx.params, 'params');
    const q = parseInput(schema.downloadQuery, ctx.query, 'query');
    const { node } = guard.node(ctx, nodeId, 'content:read', q.project_id);
    if (node.type === 'folder') throw validationError('Folders cannot be downloaded.', [{ field: 'node_id', message: 'is a folder' }]);
    const v = store.getVersion(node.projectId, { id: node.id }, q.version ?? node.version);
    if (!v.blobId) throw validationError(`Version ${v.version} holds no content.`, [{ field: 'version', message: 'no content' }]);
    const token = await tokens.signDownload({ projectId: node.projectId, nodeId: node.id, version: v.version });
    ok(ctx, {
      download_url: address(`download/${token}`),
      node_id: node.id,
      version: v.version,
      size: v.size,
      content_hash: v.blobId,
      expires_in: DOWNLOAD_TTL_SECONDS,
    });
  });

  return router;
}
