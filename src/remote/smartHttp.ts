import type { GitAction } from './gitAccess.ts';

export interface SmartRequest {
  projectId: string;
  /** PATH_INFO for http-backend: `/<project>.git/<rest>`. */
  pathInfo: string;
  action: GitAction;
  /** True for the request that carries a push (its end is when refs have moved). */
  isPush: boolean;
}

const PROJECT_PATH = /^\/git\/([A-Za-z0-9][A-Za-z0-9_.-]{0,127})\.git(\/.*)$/;

/**
 * Recognises the four requests of git's smart HTTP protocol on `/git/<project>.git`. Nothing
 * else is served (no dumb-protocol file access), so every allowed request is one whose
 * permission is known.
 */
export function parseSmartRequest(method: string, path: string, service: unknown): SmartRequest | null {
  const m = PROJECT_PATH.exec(path);
  if (!m || m[1]!.includes('..')) return null;
  const [, projectId, rest] = m as unknown as [string, string, string];
  const pathInfo = `/${projectId}.git${rest}`;
  if ((method === 'GET' || method === 'HEAD') && rest === '/info/refs') {
    if (service === 'git-upload-pack') return { projectId, pathInfo, action: 'content:read', isPush: false };
    if (service === 'git-receive-pack') return { projectId, pathInfo, action: 'content:write', isPush: false };
    return null;
  }
  if (method === 'POST' && rest === '/git-upload-pack') return { projectId, pathInfo, action: 'content:read', isPush: false };
  if (method === 'POST' && rest === '/git-receive-pack') return { projectId, pathInfo, action: 'content:write', isPush: true };
  return null;
}
