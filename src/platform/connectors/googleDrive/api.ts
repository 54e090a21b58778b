import type { ConnectorContext, SourceResponse } from '../../runtime/connector.ts';
import { ProviderError, providerMessage } from '../../runtime/providerError.ts';
import { googleErrorReason, googlePages } from '../google/shared.ts';

/** A file as Drive v3 describes it, with the fields this connector asks for. */
export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents?: string[];
  trashed?: boolean;
  modifiedTime?: string;
  /** Only binary (non-Google) files have one. */
  md5Checksum?: string;
  /** int64 as a string: bumped by every change on the server, metadata included. */
  version?: string;
  size?: string;
  driveId?: string;
}

/** One entry of `changes.list`. */
export interface DriveChange {
  changeType?: 'file' | 'drive';
  /** The file was removed from the user's view (deleted for good, or access lost). */
  removed?: boolean;
  fileId?: string;
  time?: string;
  file?: DriveFile;
}

export const FOLDER = 'application/vnd.google-apps.folder';

/** The fields of a file every listing and change asks for (Drive answers only what `fields` names). */
export const FILE_FIELDS = 'id,name,mimeType,parents,trashed,modifiedTime,md5Checksum,version,size,driveId';

/** Drive's largest page of `files.list` and `changes.list`. */
const PAGE_SIZE = 1000;

/**
 * Where the folder lives: a shared drive (its id), or the user's own corpus (null). Every call
 * names it, since Drive keeps a separate change feed per shared drive.
 */
export interface Corpus {
  driveId: string | null;
}

const allDrives = (c: Corpus) => ({
  supportsAllDrives: true,
  includeItemsFromAllDrives: true,
  ...(c.driveId ? { corpora: 'drive', driveId: c.driveId } : {}),
});

export async function getFile(ctx: ConnectorContext, id: string): Promise<DriveFile> {
  const res = await ctx.http.request({ url: `/drive/v3/files/${encodeURIComponent(id)}`, query: { fields: FILE_FIELDS, supportsAllDrives: true } });
  return res.json<DriveFile>();
}

/**
 * The files (folders included) whose parent is one of `folderIds`, page by page: one query
 * names several folders (`'a' in parents or 'b' in parents`), so a tree of many small folders
 * costs a call per group of folders rather than one per folder.
 */
export function listChildren(ctx: ConnectorContext, corpus: Corpus, folderIds: string[]): AsyncGenerator<{ items: DriveFile[] }> {
  const parents = folderIds.map((id) => `'${id.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}' in parents`).join(' or ');
  return googlePages<DriveFile>(
    (pageToken) =>
      ctx.http.request({
        url: '/drive/v3/files',
        query: {
          q: `(${parents}) and trashed = false`,
          fields: `nextPageToken,files(${FILE_FIELDS})`,
          pageSize: PAGE_SIZE,
          pageToken,
          ...allDrives(corpus),
        },
      }),
    'files',
  );
}

/** The token from which `changes.list` reports what happens after now. */
export async function startPageToken(ctx: ConnectorContext, corpus: Corpus): Promise<string> {
  const res = await ctx.http.request({
    url: '/drive/v3/changes/startPageToken',
    query: { supportsAllDrives: true, ...(corpus.driveId ? { driveId: corpus.driveId } : {}) },
  });
  return res.json<{ startPageToken: string }>().startPageToken;
}

/** The changes since `token`, every page; null when Drive no longer knows the token. */
export async function listChanges(ctx: ConnectorContext, corpus: Corpus, token: string): Promise<{ changes: DriveChange[]; newStartPageToken: string } | null> {
  const changes: DriveChange[] = [];
  let pageToken: string | undefined = token;
  for (;;) {
    const res = await ctx.http.request({
      url: '/drive/v3/changes',
      query: {
        pageToken,
        pageSize: PAGE_SIZE,
        includeRemoved: true,
        spaces: 'drive',
        fields: `nextPageToken,newStartPageToken,changes(changeType,removed,fileId,time,file(${FILE_FIELDS}))`,
        supportsAllDrives: true,
        includeItemsFromAllDrives: true,
        ...(corpus.driveId ? { driveId: corpus.driveId } : {}),
      },
      accept: [400, 404, 410],
    });
    if (res.status !== 200) {
      if (invalidToken(res)) return null;
      throw new ProviderError('google-drive', res.status, providerMessage(res.body, res.status));
    }
    const body = res.json<{ changes?: DriveChange[]; nextPageToken?: string; newStartPageToken?: string }>();
    changes.push(...(body.changes ?? []));
    if (body.newStartPageToken) return { changes, newStartPageToken: body.newStartPageToken };
    if (!body.nextPageToken) throw new Error('Drive answered a changes page with neither nextPageToken nor newStartPageToken');
    pageToken = body.nextPageToken;
  }
}

/**
 * Drive refuses a page token it no longer knows (too old, from another corpus, garbled) with
 * 400 `invalid` on the `pageToken` parameter, or 404/410: the token must be discarded.
 */
function invalidToken(res: SourceResponse): boolean {
  if (res.status === 404 || res.status === 410) return true;
  const reason = googleErrorReason(res);
  return res.status === 400 && (reason === 'invalid' || reason === 'invalidParameter' || /pageToken/i.test(res.text()));
}

/** A binary file's bytes. */
export async function download(ctx: ConnectorContext, id: string): Promise<Buffer> {
  const res = await ctx.http.request({ url: `/drive/v3/files/${encodeURIComponent(id)}`, query: { alt: 'media', supportsAllDrives: true }, headers: { accept: '*/*' } });
  return res.body;
}

/**
 * A Google file (Docs, Sheets, Slides…) exported to `mimeType`; null when Drive refuses that
 * export (an unsupported type, or an export larger than its 10 MB limit), so the caller can try another.
 */
export async function exportAs(ctx: ConnectorContext, id: string, mimeType: string): Promise<Buffer | null> {
  try {
    const res = await ctx.http.request({ url: `/drive/v3/files/${encodeURIComponent(id)}/export`, query: { mimeType }, headers: { accept: '*/*' }, accept: [400] });
    return res.status === 400 ? null : res.body;
  } catch (err) {
    // 403 is not accepted above: the runtime must still see (and wait out) a 403 rateLimitExceeded.
    // What it throws after that is a rate limit; another 403 (exportSizeLimitExceeded) is a refusal.
    if (err instanceof ProviderError && err.status === 403 && !/^rate limited/.test(err.providerMessage)) return null;
    throw err;
  }
}
