import { z } from 'zod';
import { actorOf } from '../../auth/principal.ts';
import type { Authenticator } from '../../auth/authenticator.ts';
import type { Settings } from '../../config/settings.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { Logger } from '../../logging/logger.ts';
import { newId } from '../../util/ids.ts';
import { UploadGrants, type UploadGrantRow } from '../../domain/uploads/uploadGrants.ts';
import { newNodeId, type Actor, type ContentStore } from '../../content/contentStore.ts';
import { joinPath } from '../../content/paths.ts';
import { sendSource } from '../../http/byteRange.ts';
import { created, ok } from '../../http/envelope.ts';
import { asAppError, conflict, forbidden, notFound, validationError } from '../../http/errors.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { pathInScope } from '../../policies/scope.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { nodeContentSchema, presentNodeContent } from '../../presenters/nodeContent.ts';
import { nodeById } from '../shared/nodeHistory.ts';
import { parentFolder } from './parentFolder.ts';
import { DOWNLOAD_TTL_SECONDS, PresignedTokens, UPLOAD_TTL_SECONDS } from './presigned.ts';
import * as answer from './answers.ts';
import { sizedBody, tooLarge } from './uploadBody.ts';
import * as schema from './schemas.ts';

/** What transfers use: the content, the policy, who holds an upload address now, the grants' table and the signing secret. */
export interface TransferDeps {
  content: ContentStore;
  access: ContentAccess;
  authenticator: Pick<Authenticator, 'current'>;
  metadata: MetadataStore;
  logger: Pick<Logger, 'warn'>;
  signingSecret: Uint8Array;
  settings: Pick<Settings, 'baseUrl' | 'maxUploadBytes'>;
}

/** A grant row's size when the client declared none: the PUT's body tells it, up to the limit. */
const UNDECLARED_SIZE = -1;
/** A PUT renews its claim this often while it streams; a claim not renewed for CLAIM_STALE_MS was left by a process that stopped. */
const CLAIM_RENEW_MS = 30_000;
const CLAIM_STALE_MS = 3 * CLAIM_RENEW_MS;
/** The trailer line of an upload's commit: a claim left by a crash after it is known used. */
export const uploadTrailer = (uploadId: string): string => `Cns-Upload: ${uploadId}`;

/**
 * Uploads and downloads through presigned addresses served by this service. An upload address
 * names a grant row (src/domain/uploads/uploadGrants.ts): a new `file` node at a path, or a new version of one file
 * node, of exactly the declared size (or, without one, of any size up to the limit). Its PUT streams the body into a git blob (memory stays
 * bounded), then commits it; right before that commit, in the project's serialized section, the holder is authorized again,
 * and the target must be as it was when the address was issued (else 409, nothing written). The
 * grant row is claimed before (one PUT at a time, in any process) and deleted after the commit,
 * which names it: an address writes once. A claim left by a stopped process is finished when its
 * commit is there, else released once stale. A download address pins one version of a node and
 * serves it with Range support.
 */
export function nodeTransferRoutes(s: TransferDeps): RouteGroup {
  const store = s.content;
  const tokens = new PresignedTokens(s.signingSecret);
  const grants = new UploadGrants(s.metadata);
  const address = (path: string) => `${s.settings.baseUrl}/api/v1/nodes/${path}`;

  const upload = route({
    method: 'post',
    path: '/upload',
    summary: 'An upload address for a new file node or a new version of one',
    description: '`size` is optional: without it the PUT may send any size up to `max_size` (checked while streaming).',
    permission: 'content:write',
    authorize: { content: ({ body }) => body.project_id },
    status: 201,
    query: schema.uploadQuery,
    bodyFromQuery: ({ content_type, ...q }) => ({ ...q, mime_type: content_type }),
    body: schema.uploadBody,
    response: answer.uploadAddress,
    async handle(ctx, { body, access: g }) {
    if (body.size !== undefined && body.size > s.settings.maxUploadBytes) throw tooLarge(s.settings.maxUploadBytes);
    let target: { caller: ContentGrant; nodeId: string; parentId: string | null; name: string; path: string; baseVersion: number };
    if (body.node_id !== undefined) {
      // A new version of a node named in the body: the node itself through the policy.
      const node = store.findById(body.node_id);
      const caller = await s.access.node(g.principal, node, 'content:write', body.project_id);
      if (node!.state !== 'active') throw conflict('The node is in the trash; restore it first.', { id: node!.id });
      if (node!.type !== 'file') {
        throw validationError(`node_id is a ${node!.type} node; uploads add versions to file nodes only.`, [{ field: 'node_id', message: `is a ${node!.type} node` }]);
      }
      target = { caller, nodeId: node!.id, parentId: node!.parentId, name: node!.name, path: node!.path, baseVersion: node!.version };
    } else {
      const parent = parentFolder(store, g, body.parent_id);
      const name = body.name!;
      const path = joinPath(parent.path, name);
      s.access.requirePath(g, path);
      if (store.findByPath(g.projectId, path)) throw conflict(`${path} already exists; send its node_id to upload a new version.`, { path });
      target = { caller: g, nodeId: newNodeId(), parentId: parent.id, name, path, baseVersion: 0 };
    }
    const { caller } = target;
    const now = Date.now();
    const row: Omit<UploadGrantRow, 'claimed_at'> = {
      id: newId('upl', 16),
      project_id: caller.projectId,
      node_id: target.nodeId,
      parent_id: target.parentId,
      name: target.name,
      path: target.path,
      base_version: target.baseVersion,
      size: body.size ?? UNDECLARED_SIZE,
      mime_type: body.mime_type ?? null,
      principal_kind: caller.principal.kind,
      principal_id: caller.principal.id,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + UPLOAD_TTL_SECONDS * 1000).toISOString(),
    };
    await grants.issue(row);
    const token = await tokens.signUpload({ uploadId: row.id, projectId: row.project_id });
    created(ctx, {
      upload_url: address(`upload/${token}`),
      method: 'PUT',
      node_id: row.node_id,
      path: row.path,
      size: row.size === UNDECLARED_SIZE ? null : row.size,
      base_version: row.base_version,
      expires_in: UPLOAD_TTL_SECONDS,
      max_size: s.settings.maxUploadBytes,
    }, 'PUT the file bytes to upload_url');
    },
  });

  /**
   * What the grant allows now, or why not: the holder still has write access to the target path
   * (403), and the target is the one the address was issued for (409). Run before the body is
   * read (fail fast) and again right before the commit, after every earlier write of the project
   * (CommitOptions.check: the check that counts).
   */
  async function recheck(row: UploadGrantRow): Promise<{ actor: Actor }> {
    const principal = await s.authenticator.current({ kind: row.principal_kind, id: row.principal_id });
    const gone = () => forbidden('The holder of this upload address no longer has write access to it.');
    if (!principal) throw gone();
    let scope: string;
    try {
      scope = (await s.access.grant(principal, row.project_id, 'content:write')).scope;
    } catch (e) {
      if (asAppError(e)) throw gone();
      throw e;
    }
    const changed = (why: string) =>
      conflict(`The upload target changed since the address was issued (${why}); nothing was written. Ask for a new address.`, {
        path: row.path,
        node_id: row.node_id,
        base_version: row.base_version,
      });
    if (row.base_version > 0) {
      const node = store.findById(row.node_id);
      if (!node || node.projectId !== row.project_id) throw changed('the node was deleted');
      if (node.state !== 'active') throw changed('the node is in the trash');
      if (!pathInScope(scope, node.path)) throw gone();
      if (node.path !== row.path) throw changed(`the node moved to ${node.path}`);
      if (node.version !== row.base_version) throw changed(`the node is at version ${node.version}, not ${row.base_version}`);
      if (node.type !== 'file') throw changed(`the node is a ${node.type} node now`);
    } else {
      const parent = row.parent_id === null ? null : store.findById(row.parent_id);
      if (row.parent_id !== null && (!parent || parent.projectId !== row.project_id || parent.state !== 'active')) throw changed('the folder was deleted');
      const path = joinPath(parent?.path ?? '', row.name);
      if (!pathInScope(scope, path)) throw gone();
      if (path !== row.path) throw changed(`the folder moved; the file would be ${path}`);
      if (store.findByPath(row.project_id, row.path)) throw changed(`${row.path} exists now`);
      if (store.findById(row.node_id)) throw changed('the node id is in use');
    }
    return { actor: actorOf(principal) };
  }

  const put = route({
    method: 'put',
    path: '/upload/:token',
    summary: 'PUT the bytes of a file to its upload address',
    description: 'No credential: the address is the grant. The body is the raw bytes (any media type). 201 for a new node, 200 for a new version.',
    authorize: { public: 'the address is the grant: a signed token naming an upload grant row, rechecked against its holder' },
    status: 201,
    alsoStatus: 200,
    params: tokenParams,
    response: answer.uploaded,
    async handle(ctx, { params }) {
    const { uploadId, projectId } = await tokens.verifyUpload(params.token);
    const used = () => forbidden('This upload address has already been used.');
    const busy = () => conflict('This upload address is being used by another request.');
    const row = await grants.find(uploadId);
    if (!row || row.project_id !== projectId) throw used();
    if (row.claimed_at !== null) {
      const settled = await settleClaim(row);
      if (settled === 'finished') throw used();
      if (settled === 'held') throw busy();
    }
    const { actor } = await recheck(row);
    const declared = ctx.get('Content-Length');
    const exact = row.size !== UNDECLARED_SIZE;
    if (exact && declared !== '' && Number(declared) > row.size) throw tooLarge(row.size);
    if (exact && declared !== '' && Number(declared) < row.size) {
      throw validationError(`The body has ${declared} bytes; ${row.size} were declared.`, [{ field: 'body', message: 'size differs from the declared size' }]);
    }
    let claim = await grants.claim(row.id);
    if (!claim) throw busy();
    const renewing = setInterval(() => {
      void grants.renew(row.id, claim!).then((at) => (claim = at ?? claim), () => {});
    }, CLAIM_RENEW_MS);
    renewing.unref();
    let release = () => {};
    let committed = false;
    try {
      const body = await sizedBody(ctx.req, exact ? row.size : null, declared, s.settings.maxUploadBytes);
      release = body.release;
      const blobId = await store.writeBlobStream(row.project_id, body.stream, body.size);
      const mutation = { op: 'writeBlob' as const, id: row.node_id, path: row.path, blobId, size: body.size, baseVersion: row.base_version };
      const result = await store.commit(row.project_id, actor, [mutation], {
        message: `upload ${row.name}`,
        trailers: [uploadTrailer(row.id)],
        // Streaming took time: authorize and compare again where it counts.
        check: async () => {
          await recheck(row);
        },
      });
      committed = true;
      clearInterval(renewing);
      // The grant is used up. A failure here leaves the claim, which the next PUT finishes (the commit names it).
      await grants.finish(row.id).catch((err: unknown) => s.logger.warn({ err, upload: row.id }, 'an upload is committed but its address could not be used up'));
      const node = result.nodes.find((n) => n.id === row.node_id) ?? store.getById(row.project_id, row.node_id);
      const data = { ...nodePresenter(store, 'id').node(node), project_version: result.projectVersion };
      if (row.base_version === 0) created(ctx, data, 'Uploaded');
      else ok(ctx, data, `Uploaded version ${node.version}`);
    } finally {
      clearInterval(renewing);
      release();
      // Nothing was written: the address may be used again.
      if (!committed) await grants.release(row.id, claim).catch(() => {});
    }
    },
  });

  /**
   * A grant another PUT claimed: 'finished' when that PUT's commit is there (the row is deleted:
   * the address is used), 'released' when the claim is stale without one (a process stopped
   * mid-upload: the address may be used again), else 'held' (a PUT is streaming).
   */
  async function settleClaim(row: UploadGrantRow): Promise<'finished' | 'released' | 'held'> {
    const node = store.findById(row.node_id);
    if (node && node.projectId === row.project_id && node.version > row.base_version) {
      const version = store.getVersion(row.project_id, { id: node.id }, row.base_version + 1);
      if ((await store.commitTrailers(row.project_id, version.commitId)).includes(uploadTrailer(row.id))) {
        await grants.finish(row.id);
        return 'finished';
      }
    }
    if (Date.now() - Date.parse(row.claimed_at!) < CLAIM_STALE_MS) return 'held';
    return (await grants.release(row.id, row.claimed_at!)) ? 'released' : 'held';
  }

  const download = route({
    method: 'get',
    path: '/download/:token',
    summary: 'The bytes of the node version a download address names',
    description:
      'No credential: the address is the grant. Not an envelope: the bytes with their media type, an ETag and Range support. ' +
      '`Content-Disposition` is `attachment` with the file name; `disposition=inline` asks for `inline` (with the same name, which a browser\'s PDF viewer shows as its title), offered for PDFs only (422 otherwise).',
    authorize: { public: 'the address is the grant: a signed token pinning one version of one node' },
    params: tokenParams,
    query: downloadBytesQuery,
    streams: 'application/octet-stream',
    async handle(ctx, { params, query: q }) {
    const grant = await tokens.verifyDownload(params.token);
    const node = store.getById(grant.projectId, grant.nodeId);
    const version = store.getVersion(grant.projectId, { id: node.id }, grant.version);
    if (!version.blobId) throw notFound('Content');
    const contentType = node.mimeType ?? 'application/octet-stream';
    // Shown in place only where the browser's own viewer renders it apart from the page (never HTML, SVG or scripts on our origin).
    if (q.disposition === 'inline' && contentType !== 'application/pdf') {
      throw validationError('Only PDFs are served inline.', [{ field: 'disposition', message: `not offered for ${contentType}` }]);
    }
    const blob = await store.openBlob(grant.projectId, version.blobId);
    const name = version.path.slice(version.path.lastIndexOf('/') + 1);
    sendSource(ctx, { size: blob.size, slice: blob.stream }, { etag: version.blobId, contentType, filename: name, disposition: q.disposition });
    },
  });

  const downloadAddress = route({
    method: 'get',
    path: '/:nodeId/download',
    summary: 'A download address for a version of a file (or json, markdown) node',
    permission: 'content:read',
    authorize: nodeById,
    params: schema.nodeParams,
    query: schema.downloadQuery,
    response: answer.downloadAddress,
    async handle(ctx, { query: q, access: { node } }) {
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
    },
  });

  const content = route({
    method: 'get',
    path: '/:nodeId/content',
    summary: "A node's current content: json as content_json, markdown as content_text, a file as a download address",
    description: "PuppyOne's web client reads content here; `GET /nodes/{id}` carries the same json and markdown content as `content`.",
    permission: 'content:read',
    authorize: nodeById,
    params: schema.nodeParams,
    query: schema.optionalProjectQuery,
    response: nodeContentSchema,
    async handle(ctx, { access: { node } }) {
    if (node.type === 'folder' || !node.contentHash) {
      ok(ctx, presentNodeContent(node, null, null));
    } else if (node.type === 'file') {
      const token = await tokens.signDownload({ projectId: node.projectId, nodeId: node.id, version: node.version });
      ok(ctx, presentNodeContent(node, null, address(`download/${token}`)));
    } else {
      const read = await store.readContent(node.projectId, { id: node.id });
      ok(ctx, presentNodeContent(read.node, read.bytes, null));
    }
    },
  });

  return { prefix: '/nodes', tag: 'Nodes', routes: [upload, put, download, downloadAddress, content] };
}

const tokenParams = z.object({ token: z.string().min(1) });
const downloadBytesQuery = z.object({ disposition: z.enum(['attachment', 'inline']).default('attachment') });
