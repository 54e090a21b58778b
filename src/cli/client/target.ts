import { credentialsPath, normalizeServerUrl, readCredentials, type ServerCredentials } from '../credentials.ts';
import { configPath, readConfig } from './cliConfig.ts';
import { usageError } from './errors.ts';

type CliEnv = Record<string, string | undefined>;

export const DEFAULT_SERVER = 'http://localhost:8080';

export interface TargetFlags {
  server?: string;
  token?: string;
}

/** Which server a command talks to and with which token, and where that token came from. */
export interface Target {
  server: string;
  token: string | null;
  /** 'file' tokens may be refreshed and saved back; flag and env tokens are used as given. */
  source: 'flag' | 'env' | 'file' | 'none';
  stored: ServerCredentials | null;
  /** The credentials file a refreshed sign-in is saved to (a 'file' token only). */
  credentialsFile?: string;
}

/** `https://host/api/v1/` and `https://host` name the same server: the API prefix is dropped. */
export function serverFromInput(input: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(input) ? input : `https://${input}`);
  } catch {
    throw usageError(`not a server address: ${input}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`the server address must be http or https: ${input}`);
  url.pathname = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  url.search = '';
  url.hash = '';
  return normalizeServerUrl(url.toString());
}

/** Server: --server → CNS_SERVER → the last `cns login` → the only stored server → localhost. */
export function resolveServer(flags: TargetFlags, env: CliEnv): string {
  if (flags.server) return serverFromInput(flags.server);
  if (env.CNS_SERVER) return serverFromInput(env.CNS_SERVER);
  const current = readConfig(configPath(env)).server;
  if (current) return current;
  const stored = Object.keys(readCredentials(credentialsPath(env)).servers);
  return stored.length === 1 ? serverFromInput(stored[0]!) : DEFAULT_SERVER;
}

/** Token: --token → CNS_TOKEN → the credentials file's entry for the server. */
export function resolveTarget(flags: TargetFlags, env: CliEnv): Target {
  const server = resolveServer(flags, env);
  const credentialsFile = credentialsPath(env);
  if (flags.token) return { server, token: flags.token, source: 'flag', stored: null, credentialsFile };
  if (env.CNS_TOKEN) return { server, token: env.CNS_TOKEN, source: 'env', stored: null, credentialsFile };
  const stored = readCredentials(credentialsFile).servers[server] ?? null;
  if (stored?.token) return { server, token: stored.token, source: 'file', stored, credentialsFile };
  return { server, token: null, source: 'none', stored: null, credentialsFile };
}
