import type { Command } from 'commander';
import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { withIo } from '../client/action.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { usageError } from '../client/errors.ts';
import { formatBytes } from '../client/output.ts';
import { intArgument, remotePath } from '../client/remotePath.ts';
import type { CliIo } from '../io.ts';

type Format = 'zip' | 'tar.gz';

interface ExportFlags extends ClientFlags {
  output?: string;
  format?: string;
  version?: string;
}

interface ImportFlags extends ClientFlags {
  mode?: string;
  format?: string;
  message?: string;
}

function formatOption(value: string | undefined): Format | undefined {
  if (value === undefined) return undefined;
  if (value === 'zip' || value === 'tar.gz') return value;
  if (value === 'tgz') return 'tar.gz';
  throw usageError(`--format must be zip or tar.gz (got "${value}")`);
}

/** The format a file name asks for: `.zip`, `.tar.gz` or `.tgz`; none otherwise. */
function formatOfName(name: string): Format | undefined {
  if (/\.zip$/i.test(name)) return 'zip';
  if (/\.(tar\.gz|tgz)$/i.test(name)) return 'tar.gz';
  return undefined;
}

/**
 * `cns export [PATH]`: the folder's archive streamed to a file (written as FILE.part and renamed
 * when complete: a failed download leaves no truncated archive behind) or to stdout.
 */
async function exportArchive(io: CliIo, path: string | undefined, flags: ExportFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const toStdout = flags.output === undefined || flags.output === '-';
    const format = formatOption(flags.format) ?? (toStdout ? undefined : formatOfName(flags.output!)) ?? 'zip';
    if (toStdout && io.stdout.isTTY) throw usageError('an archive is binary: give -o FILE, or pipe or redirect stdout');
    if (toStdout && ctx.out.json) throw usageError('--json prints a summary on stdout: give -o FILE for the archive');
    const query = { path: remotePath(path), format, version: flags.version === undefined ? undefined : intArgument(flags.version, '--version', 1) };
    const route = await ctx.contentPath('archive');
    if (toStdout) {
      await ctx.api.download(route, query, io.stdout as Writable, { end: false });
      return;
    }
    const file = resolve(io.cwd, flags.output!);
    const part = `${file}.part`;
    let headers: Headers;
    const sink = createWriteStream(part);
    try {
      headers = await ctx.api.download(route, query, sink);
      await rename(part, file);
    } catch (err) {
      sink.destroy();
      await rm(part, { force: true });
      if ((err as NodeJS.ErrnoException).syscall) throw usageError(`cannot write ${flags.output}: ${(err as Error).message}`);
      throw err;
    }
    const { size: bytes } = await stat(file);
    const summary = { path: query.path, format, project_version: Number(headers.get('x-cns-project-version')), file, bytes };
    ctx.out.result(summary, () => ctx.out.line(`Exported ${query.path || '/'} at version ${summary.project_version} to ${flags.output} (${format}, ${formatBytes(bytes)})`));
  });
}

/** Stdin spooled to a temporary file, so that the upload streams from disk like a named file. */
async function spoolStdin(io: CliIo): Promise<{ file: string; cleanup: () => Promise<void> }> {
  if (io.stdin.isTTY) throw usageError('give an ARCHIVE file, or pipe one on stdin');
  const dir = await mkdtemp(join(tmpdir(), 'cns-import-'));
  const file = join(dir, 'stdin');
  await writeFile(file, '');
  await pipeline(io.stdin, createWriteStream(file));
  return { file, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

interface ImportAnswer {
  changed: boolean;
  project_version: number | null;
  commit_id: string | null;
  files: number;
  folders: number;
  removed: number;
}

/** `cns import ARCHIVE [PATH]`: a zip or tar.gz uploaded as multipart and written as one version. */
async function importArchive(io: CliIo, archive: string, path: string | undefined, flags: ImportFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const mode = flags.mode ?? 'merge';
    if (mode !== 'merge' && mode !== 'replace') throw usageError(`--mode must be merge or replace (got "${mode}")`);
    const fromStdin = archive === '-';
    const format = formatOption(flags.format) ?? (fromStdin ? undefined : formatOfName(archive));
    const spooled = fromStdin ? await spoolStdin(io) : null;
    try {
      const file = spooled?.file ?? resolve(io.cwd, archive);
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) throw usageError(`${archive} is not a file`);
      const form = new FormData();
      form.set('path', remotePath(path));
      form.set('mode', mode);
      if (format) form.set('format', format);
      if (flags.message !== undefined) form.set('message', flags.message);
      const name = fromStdin ? `stdin.${format ?? 'archive'}` : basename(file);
      form.set('file', await openAsBlob(file), name);
      const { data } = await ctx.api.postForm<ImportAnswer>(await ctx.contentPath('import'), form);
      const target = remotePath(path) || '/';
      ctx.out.result(data, () =>
        ctx.out.line(
          data.changed
            ? `Imported ${count(data.files, 'file')} and ${count(data.folders, 'folder')} into ${target}${data.removed ? `, ${count(data.removed, 'node')} moved to the trash` : ''}: project version ${data.project_version}`
            : `${target} already holds the archive's content: nothing changed`,
        ),
      );
    } finally {
      await spooled?.cleanup();
    }
  });
}

/** Archives: `cns export [PATH]`, `cns import ARCHIVE [PATH]`. */
export function registerArchiveCommands(program: Command, io: CliIo): void {
  clientOptions(
    program
      .command('export')
      .description('download a folder (default: the project) as a zip or tar.gz archive, to a file or stdout')
      .argument('[path]', 'folder path (default: the project root)'),
  )
    .option('-o, --output <file>', 'write the archive to FILE (default: stdout; "-" too)')
    .option('-f, --format <format>', 'zip or tar.gz (default: from the name of --output, else zip)')
    .option('--version <n>', 'the project as it was at this project version')
    .action(withIo(io, exportArchive));
  clientOptions(
    program
      .command('import')
      .description("write a zip or tar.gz archive's files into a folder as one version")
      .argument('<archive>', 'local zip or tar.gz ("-": stdin)')
      .argument('[path]', 'folder the archive lands in (default: the project root)'),
  )
    .option('--mode <mode>', 'merge (write over what is there) or replace (also move what the archive lacks to the trash)', 'merge')
    .option('-f, --format <format>', 'zip or tar.gz (default: from the name, else the first bytes)')
    .option('-m, --message <message>', 'version message')
    .action(withIo(io, importArchive));
}

/** `1 file`, `2 files`. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
