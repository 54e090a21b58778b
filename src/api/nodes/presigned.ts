import { SignJWT, jwtVerify, errors } from 'jose';
import { AppError } from '../../http/errors.ts';

const ISSUER = 'cns';
/** Audiences keep the kinds apart: an upload address is no download address and no API token. */
const UPLOAD = 'cns-upload';
const DOWNLOAD = 'cns-download';
export const UPLOAD_TTL_SECONDS = 15 * 60;
export const DOWNLOAD_TTL_SECONDS = 10 * 60;

/**
 * What an upload address names: one row of node_uploads (domain/uploads/uploadGrants.ts), which holds what it
 * allows and who asked. The row, not the address, decides; the address only proves it was issued.
 */
export interface UploadGrant {
  uploadId: string;
  projectId: string;
}

/** What a download address serves: one version of one node (pinned, so the bytes never change under it). */
export interface DownloadGrant {
  projectId: string;
  nodeId: string;
  version: number;
}

/**
 * Presigned addresses are HS256 JWTs signed with the service's secret and carried in the URL:
 * they need no other credential, expire, and any change to them breaks the signature.
 */
export class PresignedTokens {
  constructor(private readonly secret: Uint8Array) {}

  signUpload(g: UploadGrant): Promise<string> {
    return this.sign(UPLOAD, { uid: g.uploadId, pid: g.projectId }, UPLOAD_TTL_SECONDS);
  }

  signDownload(g: DownloadGrant): Promise<string> {
    return this.sign(DOWNLOAD, { pid: g.projectId, nid: g.nodeId, ver: g.version }, DOWNLOAD_TTL_SECONDS);
  }

  async verifyUpload(token: string): Promise<UploadGrant> {
    const p = await this.verify(token, UPLOAD);
    if (typeof p.uid !== 'string' || typeof p.pid !== 'string') throw new AppError('UNAUTHORIZED', 'This address is not valid (altered or not issued by this service).');
    return { uploadId: p.uid, projectId: p.pid };
  }

  async verifyDownload(token: string): Promise<DownloadGrant> {
    const p = await this.verify(token, DOWNLOAD);
    return { projectId: p.pid as string, nodeId: p.nid as string, version: p.ver as number };
  }

  private sign(audience: string, claims: Record<string, unknown>, ttl: number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(`${ttl}s`)
      .sign(this.secret);
  }

  private async verify(token: string, audience: string) {
    try {
      return (await jwtVerify(token, this.secret, { issuer: ISSUER, audience, algorithms: ['HS256'] })).payload;
    } catch (e) {
      if (e instanceof errors.JWTExpired) throw new AppError('UNAUTHORIZED', 'This address has expired; ask for a new one.');
      throw new AppError('UNAUTHORIZED', 'This address is not valid (altered or not issued by this service).');
    }
  }
}
