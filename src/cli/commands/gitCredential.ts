import type { Command } from 'commander';
import { credentialsPath, findServerCredentials, normalizeServerUrl, readCredentials, type ServerCredentials } from '../credentials.ts';
import type { CliIo } from '../io.ts';

type Env = CliIo['env'];

/** git's credential-helper request: `key=value` lines up to a blank line or the end of input. */
export function parseCredentialRequest(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const l = line.replace(/\r$/, '');
    if (l === '') break;
    const i = l.indexOf('=');
    if (i > 0) out[l.slice(0, i)] = l.slice(i + 1);
  }
  return out;
}

/**
 * The token for a request: CNS_TOKEN (only for CNS_SERVER when that is set, so the token is not
 * handed to every host git asks about), else the credentials file's entry for that server.
 */
export function tokenForRequest(req: Record<string, string>, env: Env): string | null {
  return credentialForRequest(req, env)?.token ?? null;
}

/** Where the token comes from: a stored sign-in can be refreshed, CNS_TOKEN is used as given. */
function credentialForRequest(
  req: Record<string, string>,
  env: Env,
): { token: string; stored: { server: string; credentials: ServerCredentials; file: string } | null } | null {
  if (!req.protocol || !req.host || !['http', 'https'].includes(req.protocol)) return null;
  const origin = `${req.protocol}://${req.host}`;
  if (env.CNS_TOKEN) {
    if (!env.CNS_SERVER || sameOrigin(env.CNS_SERVER, origin)) return { token: env.CNS_TOKEN, stored: null };
  }
  const file = credentialsPath(env);
  const stored = findServerCredentials(readCredentials(file), origin, req.path ?? '');
  return stored?.credentials.token ? { token: stored.credentials.token, stored: { ...stored, file } } : null;
}

/**
 * A stored user sign-in expires after an hour; git would then fail until another `cns` command
 * refreshed it, so the helper refreshes it itself (under the same lock as every cns command).
 */
async function freshToken(io: CliIo, req: Record<string, string>): Promise<string | null> {
  const found = credentialForRequest(req, io.env);
  if (!found?.stored) return found?.token ?? null;
  const { ApiClient } = await import('../client/apiClient.ts');
  const { server, credentials, file } = found.stored;
  const client = new ApiClient({ server, token: found.token, source: 'file', stored: credentials, credentialsFile: file });
  try {
    return await client.currentToken();
  } catch (err) {
    io.stderr.write(`cns: ${(err as Error).message}\n`);
    return null;
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(normalizeServerUrl(a)).origin === new URL(normalizeServerUrl(b)).origin;
  } catch {
    return false;
  }
}

async function readStdin(stdin: CliIo['stdin']): Promise<string> {
  let text = '';
  for await (const chunk of stdin) text += String(chunk);
  return text;
}

/**
 * `cns git-credential get|store|erase`: git's credential-helper protocol, so that
 * `git -c credential.helper='!cns git-credential' clone <server>/git/<project>.git` works
 * without a token in the URL. Only `get` answers; tokens are managed by `cns login`, so
 * `store` and `erase` change nothing.
 */
export function registerGitCredentialCommand(program: Command, io: CliIo): void {
  program
    .command('git-credential')
    .description('git credential helper (git config credential.helper "!cns git-credential"): token from CNS_TOKEN or `cns login`')
    .argument('<operation>', 'get, store or erase (called by git)')
    .action(async (operation: string) => {
      const request = parseCredentialRequest(await readStdin(io.stdin));
      if (operation !== 'get') return;
      const token = await freshToken(io, request);
      if (token) io.stdout.write(`username=cns\npassword=${token}\n`);
    });
}
