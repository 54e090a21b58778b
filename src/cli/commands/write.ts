import type { Command } from 'commander';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { joinPath } from '../../content/paths.ts';
import { withIo } from '../client/action.ts';
import { clientOptions, runClient, type ClientFlags, type CommandContext } from '../client/context.ts';
import { usageError } from '../client/errors.ts';
import { contentForApi, nodeTypeFor } from '../client/nodeContent.ts';
import { formatBytes } from '../client/output.ts';
import { Progress } from '../client/progress.ts';
import { intArgument, remotePath, requiredRemotePath } from '../client/remotePath.ts';
import type { CliIo } from '../io.ts';
import type { Entry } from './browse.ts';

interface WriteFlags extends ClientFlags {
  type?: string;
  message?: string;
  baseVersion?: string;
  recursive?: boolean;
}

/** bulk-write requests stay well under the server's default 32 MB body limit (base64 adds a third). */
const CHUNK_FILES = 500;
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Local folders that are tooling, not content. */
const SKIPPED_DIRS = new Set(['.git', '.cns']);

async function readStdin(stdin: CliIo['stdin']): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

async function writeOne(ctx: CommandContext, path: string, file: string | undefined, flags: WriteFlags): Promise<void> {
  const target = requiredRemotePath(path);
  const { stdin, cwd } = ctx.io;
  if ((file === undefined || file === '-') && stdin.isTTY) throw usageError('give a FILE to upload, or pipe the content on stdin');
  const bytes = file === undefined || file === '-' ? await readStdin(stdin) : await readFile(resolve(cwd, file)).catch((err: NodeJS.ErrnoException) => {
    throw usageError(`cannot read ${file}: ${err.code === 'EISDIR' ? 'it is a folder (add --recursive to upload a folder)' : err.message}`);
  });
  const type = nodeTypeFor(target, flags.type);
  const body = {
    path: target,
    node_type: type,
    content: contentForApi(type, bytes, file ?? 'stdin'),
    message: flags.message,
    base_version: flags.baseVersion === undefined ? undefined : intArgument(flags.baseVersion, '--base-version'),
  };
  const { data } = await ctx.api.post<Entry & { changed: boolean; project_version: number }>(await ctx.contentPath('write'), body);
  ctx.out.result(data, () =>
    ctx.out.line(data.changed ? `Wrote ${data.path} (${data.type}, ${formatBytes(data.size)}): version ${data.version}` : `${data.path} unchanged: still version ${data.version}`),
  );
}

interface LocalFile {
  local: string;
  remote: string;
  size: number;
}

async function walk(dir: string, root: string, into: LocalFile[]): Promise<void> {
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, d.name);
    if (d.isDirectory()) {
      if (!SKIPPED_DIRS.has(d.name)) await walk(full, root, into);
    } else if (d.isFile()) {
      into.push({ local: full, remote: relative(root, full).split(sep).join('/'), size: (await stat(full)).size });
    }
  }
}

/** Uploads a folder through bulk-write in chunks (one commit each), with progress on stderr. */
async function writeTree(ctx: CommandContext, path: string | undefined, dir: string, flags: WriteFlags): Promise<void> {
  const base = remotePath(path);
  const files: LocalFile[] = [];
  const root = resolve(ctx.io.cwd, dir);
  await walk(root, root, files);
  if (files.length === 0) throw usageError(`${dir} has no files to upload`);
  files.sort((a, b) => a.remote.localeCompare(b.remote));
  const totalBytes = files.reduce((n, f) => n + f.size, 0);
  const progress = new Progress('uploading', files.length, totalBytes, ctx.io.stderr);
  let commits = 0;
  let changed = 0;
  let projectVersion: number | null = null;
  for (let i = 0; i < files.length; ) {
    const chunk: { path: string; node_type: string; content: unknown }[] = [];
    let bytes = 0;
    while (i < files.length && chunk.length < CHUNK_FILES && (chunk.length === 0 || bytes + files[i]!.size <= CHUNK_BYTES)) {
      const f = files[i++]!;
      const remote = joinPath(base, f.remote);
      const type = nodeTypeFor(remote, flags.type);
      chunk.push({ path: remote, node_type: type, content: contentForApi(type, await readFile(f.local), f.local) });
      bytes += f.size;
    }
    const message = flags.message ?? `cns write --recursive ${dir}`;
    const { data } = await ctx.api.post<{ changed: boolean; changed_count: number; project_version: number | null }>(await ctx.contentPath('bulk-write'), { files: chunk, message });
    commits += data.changed ? 1 : 0;
    changed += data.changed_count;
    projectVersion = data.project_version ?? projectVersion;
    progress.advance(chunk.length, bytes);
  }
  progress.done();
  const summary = { path: base, files: files.length, bytes: totalBytes, commits, changed_count: changed, project_version: projectVersion };
  ctx.out.result(summary, () =>
    ctx.out.line(`Uploaded ${files.length} files (${formatBytes(totalBytes)}) to ${base || '/'} in ${commits} commit${commits === 1 ? '' : 's'}; ${changed} nodes changed`),
  );
}

async function write(io: CliIo, path: string, file: string | undefined, flags: WriteFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    if (!flags.recursive) return writeOne(ctx, path, file, flags);
    if (!file) throw usageError('--recursive needs a local FOLDER: cns write REMOTE_FOLDER LOCAL_FOLDER --recursive');
    if (flags.baseVersion !== undefined) throw usageError('--base-version applies to one file, not to --recursive');
    const info = await stat(resolve(io.cwd, file)).catch(() => null);
    if (!info?.isDirectory()) throw usageError(`${file} is not a folder`);
    await writeTree(ctx, path, file, flags);
  });
}

/** `cns write PATH [FILE]`: one node from a file or stdin, or a whole folder with --recursive. */
export function registerWriteCommand(program: Command, io: CliIo): void {
  clientOptions(
    program
      .command('write')
      .description('write a node from FILE or stdin (type from the extension: .json json, .md markdown, else file); --recursive uploads a folder')
      .argument('<path>', 'node path in the project (with --recursive: the folder to upload into; "/" for the root)')
      .argument('[file]', 'local file (default: stdin); with --recursive: local folder'),
  )
    .option('-t, --type <type>', 'node type: json, markdown or file (default: from the extension)')
    .option('-m, --message <message>', 'version message')
    .option('--base-version <n>', 'fail with a conflict (exit 5) unless the node is still at this version (0: must not exist)')
    .option('-r, --recursive', 'upload every file under the local folder FILE, in chunks of one commit each, with progress')
    .action(withIo(io, write));
}
