import { mkdir, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import { z } from 'zod';
import { importArchive } from '../../commands/importArchive.ts';
import type { Settings } from '../../config/settings.ts';
import { sniffFormat } from '../../content/archives/readArchive.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { UploadedFile } from '../../ingest/ingest.ts';
import { multipartUploads } from '../../http/multipart.ts';
import * as schema from './schemas.ts';

/** Deflate level of tar.gz (zips are git's, at -1 too): zlib's fastest, an archive moves content rather than stores it (scripts/bench-archives.ts). */
const LEVEL = 1;

export interface ArchiveRouteDeps {
  content: ContentStore;
  settings: Pick<Settings, 'dataDir' | 'maxUploadBytes' | 'maxContentBytes' | 'importMaxFiles' | 'importMaxBytes'>;
}

const isUploaded = (v: unknown): v is UploadedFile => typeof v === 'object' && v !== null && typeof (v as UploadedFile).path === 'string';
const importBody = z.object({
  path: z.string().max(4096).default('').describe("the folder the archive's root lands in, created as needed ('' = the project root)"),
  mode: z.enum(['merge', 'replace']).default('merge').describe("merge: write the archive's files over what is there; replace: also move what the folder holds and the archive does not to the trash"),
  format: z.enum(['zip', 'tar.gz']).optional().describe('absent: told by the first bytes'),
  message: z.string().max(10_000).optional(),
  files: z
    .array(z.custom<UploadedFile>(isUploaded, 'must be a file part').meta({ type: 'string', format: 'binary', description: 'the archive' }))
    .length(1, 'send exactly one file part: the archive'),
});
const int = z.number().int();
const importAnswer = z.object({
  changed: z.boolean(),
  project_version: int.nullable(),
  commit_id: z.string().nullable(),
  files: int.describe('files written (json, markdown and file nodes)'),
  folders: int.describe('folders the archive names'),
  removed: int.describe('replace: nodes moved to the trash'),
});

/** Archives in and out of a project (issue 33): the core reads and writes, these routes only stream. */
export function archiveRoutes(s: ArchiveRouteDeps): RouteGroup {
  const store = s.content;
  const project = ({ params }: { params: { projectId: string } }) => params.projectId;
  const uploads = multipartUploads(() => ({
    dir: async () => {
      const base = join(s.settings.dataDir, 'tmp', 'imports');
      await mkdir(base, { recursive: true });
      return mkdtemp(join(base, 'up-'));
    },
    maxFileBytes: s.settings.maxUploadBytes,
    maxFiles: 1,
  }));
  return {
    prefix: '/content/:projectId',
    tag: 'Content (paths)',
    routes: [
      route({
        method: 'get',
        path: '/archive',
        summary: 'A folder (or the project) as a zip or tar.gz archive, at the current or a given project version',
        description:
          'Streamed as it is made (nothing is staged on disk or in memory). Files with their stored bytes (JSON as stored, pretty-printed), ' +
          'folders as entries (in a zip an empty folder holds its empty `.cnskeep` marker, which an import reads back as the empty folder), paths relative to the folder; never the trash. `X-Cns-Project-Version` names the version archived. ' +
          '404: an unknown version, or no folder at `path` then; a key reaches only folders inside its scope.',
        permission: 'content:read',
        authorize: { content: project, paths: ({ query }) => [query.path] },
        params: schema.projectParams,
        query: schema.archiveQuery,
        streams: 'application/octet-stream',
        async handle(ctx, { params: { projectId }, query }) {
          const archive = await store.archive(projectId, query.path, query.format === 'zip' ? 'zip' : 'tar', query.version);
          const base = query.path === '' ? projectId : query.path.slice(query.path.lastIndexOf('/') + 1);
          const name = `${base}-v${archive.projectVersion}.${query.format}`;
          ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`);
          ctx.set('X-Cns-Project-Version', String(archive.projectVersion));
          ctx.set('Cache-Control', 'private, no-cache');
          ctx.type = query.format === 'zip' ? 'application/zip' : 'application/gzip';
          ctx.body = query.format === 'zip' ? archive.stream : archive.stream.pipe(gzipOf(archive.stream));
        },
      }),
      route({
        method: 'post',
        path: '/import',
        summary: "Write a zip or tar.gz archive's files into a folder as ONE commit",
        description:
          'multipart/form-data: one file part (the archive), `path` (target folder), `mode` (merge|replace), `format?`, `message?`. The archive is ' +
          'checked whole before anything is written: more than CNS_IMPORT_MAX_FILES entries or CNS_IMPORT_MAX_BYTES inflated (declared or real) ' +
          'is 413, so is an upload over CNS_MAX_UPLOAD_BYTES; absolute paths, `..`, symbolic links, encrypted or damaged entries are 422. ' +
          'Kinds as for any write: `.json` holding an object or array is a JSON node, `.md` Markdown, anything else a file. Nothing is written on failure.',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.path] },
        multipart: uploads,
        params: schema.projectParams,
        body: importBody,
        response: importAnswer,
        async handle(ctx, { body, access }) {
          const upload = body.files[0]!;
          const format = body.format ?? (await sniffFormat(upload.path));
          const r = await importArchive(
            s,
            access,
            { file: upload.path, format, path: body.path, mode: body.mode, message: body.message },
            { maxFiles: s.settings.importMaxFiles, maxBytes: s.settings.importMaxBytes, maxContentBytes: s.settings.maxContentBytes },
          );
          ok(
            ctx,
            { changed: r.changed, project_version: r.projectVersion, commit_id: r.commitId, files: r.files, folders: r.folders, removed: r.removed },
            r.changed ? `Imported ${r.files} files in one commit` : 'Nothing to change',
          );
        },
      }),
    ],
  };
}

/** A gzip of `source` that ends `source` (and so git) when the reader goes away. */
function gzipOf(source: Readable): Transform {
  const gz = createGzip({ level: LEVEL });
  gz.once('close', () => source.destroy());
  source.once('error', (e) => gz.destroy(e));
  return gz;
}
