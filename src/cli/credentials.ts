import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The credentials file of the `cns` command line: `$XDG_CONFIG_HOME/cns/credentials.json`
 * (default `~/.config/cns/credentials.json`), mode 0600, written by `cns login` and read by
 * every client command (`cns git-credential` among them). One entry per server, keyed by the
 * server's base URL as normalizeServerUrl gives it:
 *
 *   { "version": 1,
 *     "servers": { "https://cns.example.com": {
 *       "token": "<access token (JWT) or access key cns_...>",
 *       "refresh_token": "<optional>", "expires_at": "<optional ISO time of token expiry>",
 *       "email": "<optional, who signed in>" } } }
 */
export interface ServerCredentials {
  token: string;
  refresh_token?: string;
  expires_at?: string;
  email?: string;
}

export interface CredentialsFile {
  version: 1;
  servers: Record<string, ServerCredentials>;
}

export function credentialsPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'cns', 'credentials.json');
}

/** `https://Host:443/base/` → `https://host/base`: scheme and host lower-case, default port and trailing slash dropped. */
export function normalizeServerUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** The file's content; an absent or unreadable file is an empty one. */
export function readCredentials(path: string): CredentialsFile {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<CredentialsFile>;
    if (parsed && typeof parsed.servers === 'object' && parsed.servers) return { version: 1, servers: parsed.servers };
  } catch {
    /* absent or damaged: start empty */
  }
  return { version: 1, servers: {} };
}

/** Writes the whole file atomically, readable by its owner only. */
export function writeCredentials(file: CredentialsFile, path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function saveServerCredentials(serverUrl: string, creds: ServerCredentials, path: string): void {
  const file = readCredentials(path);
  file.servers[normalizeServerUrl(serverUrl)] = creds;
  writeCredentials(file, path);
}

export function removeServerCredentials(serverUrl: string, path: string): void {
  const file = readCredentials(path);
  delete file.servers[normalizeServerUrl(serverUrl)];
  writeCredentials(file, path);
}

/**
 * The entry for a request to `origin` (`scheme://host[:port]`) and, when known, `path`: the
 * server whose base URL is the longest prefix of the request URL.
 */
export function findServerCredentials(file: CredentialsFile, origin: string, path = ''): { server: string; credentials: ServerCredentials } | null {
  const target = normalizeServerUrl(origin) + '/' + path.replace(/^\/+/, '');
  let best: { server: string; credentials: ServerCredentials } | null = null;
  for (const [server, credentials] of Object.entries(file.servers)) {
    if (!credentials?.token) continue;
    let key: string;
    try {
      key = normalizeServerUrl(server);
    } catch {
      continue;
    }
    const origins = new URL(key).origin === new URL(origin).origin;
    const inside = path === '' || target.startsWith(key + '/');
    if (origins && inside && (!best || key.length > best.server.length)) best = { server: key, credentials };
  }
  return best;
}
