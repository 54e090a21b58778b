import type { Command } from 'commander';
import { credentialsPath, readCredentials, removeServerCredentials, saveServerCredentials } from '../credentials.ts';
import { withIo } from '../client/action.ts';
import { ApiClient } from '../client/apiClient.ts';
import { clearDefaultProject, defaultProjectOf, setCurrentServer, setDefaultProject } from '../client/cliConfig.ts';
import { clientOptions, runClient, type ClientFlags, type CommandContext } from '../client/context.ts';
import { ApiError, authError, usageError } from '../client/errors.ts';
import { listAllProjects } from '../client/projectRef.ts';
import { Prompter } from '../client/prompt.ts';
import { resolveServer } from '../client/target.ts';
import type { CliIo } from '../io.ts';

interface Me {
  kind: 'user' | 'key';
  user?: { id: string; email: string; display_name: string | null; is_admin: boolean };
  connection?: { id: string; name: string; project_id: string; scope_path: string; mode: string };
}

function describe(me: Me): string {
  if (me.user) return `${me.user.email} (${me.user.id})`;
  const c = me.connection!;
  return `key "${c.name}" (${c.id}) of project ${c.project_id}, scope "/${c.scope_path}", ${c.mode === 'read' ? 'read-only' : 'read-write'}`;
}

/**
 * The default project after a password sign-in, on every sign-in (not only the first), so that
 * `cns ls` works right away: the stored one when this account can still open it, else the
 * account's own (`POST /auth/initialize` sets the account up on its first sign-in, as the
 * dashboard does, and reports the same default organization and project on later ones), else
 * the first project the account sees. Null when the account has no project at all.
 */
async function defaultProjectAfterSignIn(ctx: CommandContext, server: string, token: string): Promise<{ id: string; name: string } | null> {
  const api = new ApiClient({ server, token, source: 'flag', stored: null });
  const stored = defaultProjectOf(server, ctx.configFile);
  if (stored) {
    const still = await api.get<{ id: string; name: string }>(`/projects/${encodeURIComponent(stored.id)}`).then(
      (r) => r.data,
      (err: unknown) => {
        if (err instanceof ApiError && (err.status === 404 || err.status === 403)) return null;
        throw err;
      },
    );
    if (still) return { id: still.id, name: still.name };
  }
  const { data } = await api.post<{ project: { id: string; name: string } | null }>('/auth/initialize');
  const first = data.project ?? (await listAllProjects(api))[0] ?? null;
  const project = first && { id: first.id, name: first.name };
  if (project) setDefaultProject(server, project, ctx.configFile);
  else if (stored) clearDefaultProject(server, ctx.configFile);
  return project;
}

interface LoginFlags {
  server?: string;
  key?: string;
  email?: string;
  json?: boolean;
}

async function login(io: CliIo, flags: LoginFlags): Promise<void> {
  await runClient(io, { json: flags.json }, async (ctx) => {
    const server = resolveServer({ server: flags.server }, io.env);
    const credentialsFile = credentialsPath(io.env);
    if (flags.key !== undefined) {
      if (!flags.key.trim()) throw usageError('--key needs a key');
      // Checked before it is stored, so a typo fails here rather than on the next command.
      const me = (await new ApiClient({ server, token: flags.key.trim(), source: 'flag', stored: null }).get<Me>('/auth/me')).data;
      saveServerCredentials(server, { token: flags.key.trim() }, credentialsFile);
      setCurrentServer(server, ctx.configFile);
      ctx.out.result({ server, ...me }, () => ctx.out.line(`Signed in to ${server} as ${describe(me)}`));
      return;
    }
    const prompter = new Prompter(io);
    const email = (flags.email ?? (await prompter.ask('Email: '))).trim();
    const password = await prompter.askHidden('Password: ');
    if (!email || !password) throw usageError('email and password are both needed');
    const anonymous = new ApiClient({ server, token: null, source: 'none', stored: null });
    const { data } = await anonymous
      .request<{ access_token: string; refresh_token: string; expires_in: number; user: NonNullable<Me['user']> }>('POST', '/auth/login', {
        body: { email, password },
        anonymous: true,
      })
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === 'UNAUTHORIZED') throw authError(`${(err as Error).message} (${server})`);
        throw err;
      });
    saveServerCredentials(server, {
      token: data.access_token,
      refresh_token: data.refresh_token,
      expires_at: new Date(Date.now() + data.expires_in * 1000).toISOString(),
      email: data.user.email,
    }, credentialsFile);
    setCurrentServer(server, ctx.configFile);
    const project = await defaultProjectAfterSignIn(ctx, server, data.access_token);
    const me: Me = { kind: 'user', user: data.user };
    ctx.out.result({ server, ...me, default_project: project }, () => {
      ctx.out.line(`Signed in to ${server} as ${describe(me)}`);
      if (project) ctx.out.line(`Default project: ${project.name} (${project.id}); change it with \`cns use PROJECT\``);
      else ctx.out.line('No project yet: create one with `cns projects create NAME`');
    });
  });
}

async function logout(io: CliIo, flags: { server?: string; json?: boolean }): Promise<void> {
  await runClient(io, { json: flags.json }, async (ctx) => {
    const server = resolveServer({ server: flags.server }, io.env);
    const credentialsFile = credentialsPath(io.env);
    const stored = readCredentials(credentialsFile).servers[server];
    if (!stored) {
      ctx.out.result({ server, signed_out: false }, () => ctx.out.line(`Not signed in to ${server}`));
      return;
    }
    if (stored.refresh_token) {
      // Best effort: the local sign-in is forgotten even when the server cannot be reached.
      await new ApiClient({ server, token: null, source: 'none', stored: null })
        .request('POST', '/auth/logout', { body: { refresh_token: stored.refresh_token }, anonymous: true })
        .catch(() => undefined);
    }
    removeServerCredentials(server, credentialsFile);
    ctx.out.result({ server, signed_out: true }, () => ctx.out.line(`Signed out of ${server}`));
  });
}

async function whoami(io: CliIo, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const me = (await ctx.api.get<Me>('/auth/me')).data;
    ctx.out.result({ server: ctx.server, ...me }, () => ctx.out.line(`${describe(me)} on ${ctx.server}`));
  });
}

/** `cns login`, `cns logout`, `cns whoami`: the stored sign-in per server (see src/cli/credentials.ts). */
export function registerLoginCommands(program: Command, io: CliIo): void {
  program
    .command('login')
    .description('sign in to a server and store the token (prompts for email and password; reads them as lines from stdin when not on a terminal)')
    .option('--server <url>', 'server address (CNS_SERVER; default: the last server signed in to, else http://localhost:8080)')
    .option('--key <key>', 'store an access key (cns_…) instead of signing in with a password')
    .option('--email <email>', 'email address (prompted when omitted)')
    .option('--json', 'print machine-readable JSON on stdout')
    .action(withIo(io, login));
  program
    .command('logout')
    .description('forget the stored sign-in for a server (and revoke its refresh token)')
    .option('--server <url>', 'server address (CNS_SERVER; default: the last server signed in to)')
    .option('--json', 'print machine-readable JSON on stdout')
    .action(withIo(io, logout));
  clientOptions(program.command('whoami').description('show who the stored sign-in, --token or CNS_TOKEN is'), { project: false }).action(withIo(io, whoami));
}
