import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { withIo } from '../client/action.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { CliError } from '../client/errors.ts';
import { resolveProject, type ProjectSummary } from '../client/projectRef.ts';
import type { CliIo } from '../io.ts';

const CNS_BIN = fileURLToPath(new URL('../../../bin/cns.js', import.meta.url));

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** git runs the helper through the shell: `!<node> <cns.js> git-credential`. */
export function credentialHelper(): string {
  return `!${shellQuote(process.execPath)} ${shellQuote(CNS_BIN)} git-credential`;
}

/** A folder name from a project name: `My Notes` → `my-notes`. */
function folderFor(project: ProjectSummary): string {
  const slug = project.name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '');
  return slug || project.id;
}

function runGit(args: string[], io: CliIo, env: CliIo['env']): Promise<number> {
  return new Promise((resolve, reject) => {
    // git's own output goes to stderr so that stdout carries only the result (--json).
    const child = spawn('git', args, { env, cwd: io.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(io.stderr, { end: false });
    child.stderr.pipe(io.stderr, { end: false });
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CliError(err.code === 'ENOENT' ? 'git is not installed (cns clone runs git)' : `cannot run git: ${err.message}`)),
    );
    child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function clone(io: CliIo, ref: string, dir: string | undefined, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { id } = await resolveProject(ctx.api, ref);
    const project = (await ctx.api.get<ProjectSummary>(`/projects/${encodeURIComponent(id)}`)).data;
    const url = `${ctx.server}/git/${project.id}.git`;
    const directory = dir ?? folderFor(project);
    // Scoped to this server (`credential.<url>.helper`): git asks the helper only for this
    // server, so a token (CNS_TOKEN included) is never handed to another host such as a
    // submodule's or a second remote's. The empty value resets the user's own helpers for this
    // server; `git clone -c` also keeps both in the new repository for later fetches and pushes.
    const key = `credential.${ctx.server}.helper`;
    // git shows its progress only to a terminal; piped through here it needs asking.
    const progress = io.stderr.isTTY ? ['--progress'] : [];
    const args = ['clone', ...progress, '-c', `${key}=`, '-c', `${key}=${credentialHelper()}`, url, directory];
    // The token in use (flag, env, or a just-refreshed sign-in) reaches the helper through the environment.
    const env = { ...io.env, CNS_SERVER: ctx.server, CNS_TOKEN: ctx.api.tokenValue ?? '', GIT_TERMINAL_PROMPT: '0' };
    const code = await runGit(args, io, env);
    if (code !== 0) throw new CliError(`git clone of ${url} failed (git exited with ${code})`);
    ctx.out.result({ project_id: project.id, name: project.name, url, directory }, () => ctx.out.line(`Cloned ${project.name} (${project.id}) into ${directory}`));
  });
}

/** `cns clone PROJECT [DIR]`: the project's git remote, authenticated by `cns git-credential`. */
export function registerCloneCommand(program: Command, io: CliIo): void {
  clientOptions(
    program
      .command('clone')
      .description('git clone a project ({server}/git/<project_id>.git) with cns as the credential helper')
      .argument('<project>', 'project id or name')
      .argument('[dir]', 'folder to clone into (default: the project name)'),
    { project: false },
  ).action(withIo(io, clone));
}
