import { spawn, type ChildProcess } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { readCgiResponse, type CgiResponse } from './cgiResponse.ts';
import { baseGitEnv, gitConfigEnv } from './gitConfig.ts';

export interface BackendRequest {
  /** Folder holding `<project>.git` repositories (GIT_PROJECT_ROOT). */
  projectRoot: string;
  /** `/<project>.git/info/refs` and the like. */
  pathInfo: string;
  req: IncomingMessage;
  queryString: string;
  /** Recorded by git as the pusher; also what lets http-backend accept pushes. */
  remoteUser: string;
  /** Extra variables for the hooks (push session). */
  env?: Record<string, string>;
}

export interface BackendRun extends CgiResponse {
  child: ChildProcess;
  /** Resolves with the exit code once the program has finished (null when killed). */
  exited: Promise<number | null>;
  /** What the program wrote to stderr (first 8 KiB), for the log. */
  stderr(): string;
}

/**
 * Runs `git http-backend` for one request: the CGI variables from the request (the ones git
 * silently misbehaves without are listed in docs/STACK), the request body piped still compressed
 * and unbuffered (Node already removed any chunked framing), the output split into headers and a
 * streamed body.
 */
export async function runHttpBackend(r: BackendRequest): Promise<BackendRun> {
  const h = r.req.headers;
  const env: Record<string, string> = {
    ...baseGitEnv(),
    ...gitConfigEnv(),
    ...r.env,
    GIT_PROJECT_ROOT: r.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: r.pathInfo,
    REQUEST_METHOD: r.req.method ?? 'GET',
    QUERY_STRING: r.queryString,
    CONTENT_TYPE: header(h['content-type']),
    REMOTE_USER: r.remoteUser,
    REMOTE_ADDR: r.req.socket.remoteAddress ?? '',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${r.req.httpVersion}`,
  };
  if (h['content-length'] !== undefined) env.CONTENT_LENGTH = header(h['content-length']);
  if (h['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = header(h['content-encoding']);
  if (h['git-protocol'] !== undefined) env.GIT_PROTOCOL = header(h['git-protocol']);

  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    if (stderr.length < 8192) stderr += c.toString();
  });
  // A client that goes away, or a backend that stops reading early, must not crash the service.
  child.stdin!.on('error', () => undefined);
  r.req.once('close', () => {
    if (!r.req.complete) child.kill('SIGTERM');
  });
  r.req.pipe(child.stdin!);
  try {
    const cgi = await readCgiResponse(child.stdout!);
    return { ...cgi, child, exited, stderr: () => stderr };
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`git http-backend failed: ${(e as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`);
  }
}

function header(v: string | string[] | undefined): string {
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}
