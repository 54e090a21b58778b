import type { SourceHttp } from '../../runtime/connector.ts';
import type { DocsDocument, DriveFile } from './types.ts';

/** The Docs API's public address; `CNS_GOOGLE_DOCS_API_URL` replaces it. */
export const DOCS_API_BASE = 'https://docs.googleapis.com';
/** Drive's API (file metadata), on Google's shared API host. */
export const DRIVE_API_BASE = 'https://www.googleapis.com';

const DRIVE_FIELDS = 'id,name,mimeType,version,modifiedTime,trashed';

/** How a batchUpdate went: applied, or refused with a 400 (with `requiredRevisionId` set: the document moved since it was read). */
export interface BatchAnswer {
  ok: boolean;
  /** The document's revision after the update (ok), or Google's message (refused). */
  revisionId: string | null;
  message: string;
}

/**
 * The calls the connector makes: Drive's file record (cheap: a few fields, no content) to tell
 * whether a document changed, and the Docs API's document and batchUpdate.
 */
export class DocsApi {
  /**
   * Drive is reached at its public host; when the Docs base is replaced (a local stand-in,
   * `CNS_GOOGLE_DOCS_API_URL`), Drive's paths are asked of that same stand-in.
   */
  private readonly driveBase: string;

  constructor(
    private readonly http: SourceHttp,
    apiBase: string,
  ) {
    this.driveBase = apiBase.replace(/\/+$/, '') === DOCS_API_BASE ? DRIVE_API_BASE : apiBase.replace(/\/+$/, '');
  }

  /** The file's record, or null when it is gone or not shared with the account (Drive answers 404 for both). */
  async file(id: string): Promise<DriveFile | null> {
    const res = await this.http.request({
      url: `${this.driveBase}/drive/v3/files/${encodeURIComponent(id)}`,
      query: { fields: DRIVE_FIELDS, supportsAllDrives: true },
      accept: [404],
    });
    return res.status === 404 ? null : res.json<DriveFile>();
  }

  /**
   * The document, or null when it is gone (404). `preview` reads it as if every pending suggestion
   * were rejected (what the document says today); `inline` shows suggestions in place, the view
   * that batchUpdate's indices refer to.
   */
  async document(id: string, view: 'preview' | 'inline'): Promise<DocsDocument | null> {
    const res = await this.http.request({
      url: `/v1/documents/${encodeURIComponent(id)}`,
      query: { suggestionsViewMode: view === 'preview' ? 'PREVIEW_WITHOUT_SUGGESTIONS' : 'SUGGESTIONS_INLINE' },
      accept: [404],
    });
    return res.status === 404 ? null : res.json<DocsDocument>();
  }

  /** Applies `requests` only if the document is still at `revisionId` (Google answers 400 otherwise). */
  async batchUpdate(id: string, requests: unknown[], revisionId: string): Promise<BatchAnswer> {
    const res = await this.http.request({
      method: 'POST',
      url: `/v1/documents/${encodeURIComponent(id)}:batchUpdate`,
      json: { requests, writeControl: { requiredRevisionId: revisionId } },
      accept: [400],
    });
    if (res.status === 400) {
      let message = 'HTTP 400';
      try {
        message = res.json<{ error?: { message?: string } }>().error?.message ?? message;
      } catch {
        /* not JSON: keep the status */
      }
      return { ok: false, revisionId: null, message };
    }
    const answer = res.json<{ writeControl?: { requiredRevisionId?: string } }>();
    return { ok: true, revisionId: answer.writeControl?.requiredRevisionId ?? null, message: '' };
  }
}
