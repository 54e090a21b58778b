import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { TestServer } from '../helpers/server.ts';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The real git command line as a client: an empty HOME (no user configuration), no prompts, no
 * stray credential helpers, a fixed author.
 */
export class GitClient {
  readonly home = mkdtempSync(join(tmpdir(), 'cns-git-client-'));

  run(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        'git',
        ['-c', 'credential.helper=', '-c', 'user.name=Git Tester', '-c', 'user.email=git-tester@example.com', '-c', 'init.defaultBranch=main', ...args],
        {
          cwd: options.cwd ?? this.home,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: this.home,
            GIT_TERMINAL_PROMPT: '0',
            GIT_CONFIG_NOSYSTEM: '1',
            ...options.env,
          },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.on('error', () => undefined); // git may exit without reading its input
      child.stdin.end(options.input ?? '');
    });
  }

  /** Like run, but fails with git's output when the command fails. */
  async ok(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<string> {
    const r = await this.run(args, options);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** A fresh folder under the client's HOME. */
  dir(name: string): string {
    return join(this.home, name);
  }

  dispose(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** The remote URL of a project, with the token in the URL when given. */
export function remoteUrl(server: TestServer, projectId: string, token?: string): string {
  return `${server.url.replace('://', token ? `://cns:${token}@` : '://')}/git/${projectId}.git`;
}

export interface ProjectFixture {
  token: string;
  orgId: string;
  projectId: string;
}

/** Signs the administrator in, sets up their organization and makes a new project through the API. */
export async function newProject(server: TestServer, name: string): Promise<ProjectFixture> {
  const { token } = await server.login();
  const init = await server.api('POST', '/auth/initialize', { token });
  if (init.status !== 200) throw new Error(`initialize: ${init.status} ${JSON.stringify(init.body)}`);
  const orgId: string = init.body.data.organization.id;
  const res = await server.api('POST', '/projects', { token, body: { name, org_id: orgId } });
  if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
  return { token, orgId, projectId: res.body.data.id };
}

/** An access key of the project through the API. */
export async function newKey(
  server: TestServer,
  f: ProjectFixture,
  options: { name: string; mode?: 'read' | 'read_write'; scope_path?: string },
): Promise<string> {
  const res = await server.api('POST', '/connections', { token: f.token, body: { project_id: f.projectId, kind: 'api', ...options } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.key;
}

/** Every content file of the project's current tree (not the trash), as the store returns it. */
export async function storeFiles(server: TestServer, projectId: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const content = server.services.content;
  const walk = async (node: { path: string; type: string; children: unknown[] | null }) => {
    if (node.type !== 'folder') {
      out.set(node.path, (await content.readContent(projectId, { path: node.path })).bytes);
      return;
    }
    for (const child of (node.children ?? []) as (typeof node)[]) await walk(child);
  };
  await walk(content.tree(projectId));
  return out;
}

/** Every file of a working tree except git's own folder and the empty-folder placeholders. */
export function workingTreeFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(dir, join(entry.parentPath ?? entry.path, entry.name));
    if (path.startsWith('.git/') || path.endsWith('.cnskeep')) continue;
    out.set(path, readFileSync(join(dir, path)));
  }
  return out;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What a rejected push must leave untouched: refs, index position and content. */
export async function projectState(server: TestServer, git: GitClient, projectId: string): Promise<unknown> {
  const gitdir = join(server.dataDir, `${projectId}.git`);
  const files = await storeFiles(server, projectId);
  return {
    refs: await git.ok([`--git-dir=${gitdir}`, 'for-each-ref', '--format=%(refname) %(objectname)']),
    projectVersion: server.services.content.projectVersion(projectId),
    files: [...files].map(([path, bytes]) => `${path} ${bytes.toString('base64')}`).sort(),
    quarantines: readdirSync(join(gitdir, 'objects')).filter((n) => n.startsWith('tmp_objdir')),
  };
}

/**
 * A `git fast-import` stream of `commits` commits on refs/heads/main, each changing
 * `filesPerCommit` of `fileCount` files (`f<n>.md`), starting from `from` when given.
 */
export function fastImportStream(o: { commits: number; fileCount: number; filesPerCommit: number; from?: string; seed?: string }): string {
  const parts: string[] = [];
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  let file = 0;
  for (let i = 1; i <= o.commits; i++) {
    parts.push(`commit refs/heads/main\nmark :${i}\ncommitter Git Tester <git-tester@example.com> ${1_700_000_000 + i} +0000\n`);
    parts.push(data(`commit ${i}${o.seed ? ` ${o.seed}` : ''}`));
    if (i === 1 && o.from) parts.push(`from ${o.from}\n`);
    for (let k = 0; k < o.filesPerCommit; k++) {
      parts.push(`M 100644 inline dir${file % 10}/f${file}.md\n`, data(`file ${file} in commit ${i}\n`));
      file = (file + 1) % o.fileCount;
    }
  }
  return parts.join('');
}
