import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { usageError } from '../client/errors.ts';
import { formatBytes, formatTime } from '../client/output.ts';
import { intArgument, remotePath, requiredRemotePath } from '../client/remotePath.ts';

export interface Entry {
  id: string;
  name: string;
  path: string;
  type: 'folder' | 'json' | 'markdown' | 'file';
  size: number | null;
  content_hash: string | null;
  mime_type: string | null;
  children_count: number | null;
  version: number;
  created_at: string;
  updated_at: string;
}

interface TreeEntry extends Entry {
  children?: TreeEntry[] | null;
}

interface Readable {
  type: Entry['type'];
  content?: unknown;
  content_text?: string;
  content_base64?: string;
}

const shownName = (e: Entry) => (e.type === 'folder' ? `${e.name}/` : e.name);

async function ls(io: CliIo, path: string | undefined, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data } = await ctx.api.get<{ path: string; entries: Entry[] }>(await ctx.contentPath('ls'), { path: remotePath(path) });
    ctx.out.result(data, () => {
      if (data.entries.length === 0) return ctx.out.line(`${data.path || '/'} is empty`);
      ctx.out.table(
        ['TYPE', 'SIZE', 'VERSION', 'UPDATED', 'NAME'],
        data.entries.map((e) => [e.type, e.type === 'folder' ? `${e.children_count} item${e.children_count === 1 ? '' : 's'}` : formatBytes(e.size), `v${e.version}`, formatTime(e.updated_at), shownName(e)]),
      );
    });
  });
}

/** Content as a person reads it: JSON pretty-printed, Markdown as written, files as their bytes. */
function printContent(out: { raw(b: Buffer | string): void }, item: Readable): void {
  if (item.type === 'json') out.raw(JSON.stringify(item.content, null, 2) + '\n');
  else if (item.content_text !== undefined) out.raw(item.content_text);
  else if (item.content_base64 !== undefined) out.raw(Buffer.from(item.content_base64, 'base64'));
}

async function cat(io: CliIo, path: string, flags: ClientFlags & { version?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const p = requiredRemotePath(path);
    if (flags.version !== undefined) {
      const { data } = await ctx.api.get<Readable>(await ctx.contentPath('version-content'), { path: p, version: intArgument(flags.version, '--version', 1) });
      ctx.out.result(data, () => printContent(ctx.out, data));
      return;
    }
    const { data } = await ctx.api.get<Readable & Entry>(await ctx.contentPath('cat'), { path: p });
    if (ctx.out.json) return ctx.out.result(data, () => undefined);
    if (data.type === 'folder') throw usageError(`${data.path} is a folder: list it with \`cns ls ${data.path}\``);
    if (data.type === 'file') ctx.out.raw(await ctx.api.bytes(await ctx.contentPath('raw'), { path: p }));
    else printContent(ctx.out, data);
  });
}

async function stat(io: CliIo, path: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data: e } = await ctx.api.get<Entry>(await ctx.contentPath('stat'), { path: requiredRemotePath(path) });
    ctx.out.result(e, () =>
      ctx.out.fields([
        ['path', e.path],
        ['id', e.id],
        ['type', e.type],
        ...(e.type === 'folder' ? ([['children', e.children_count]] as [string, number | null][]) : ([['size', `${formatBytes(e.size)} (${e.size} bytes)`], ['mime type', e.mime_type]] as [string, string | null][])),
        ['version', e.version],
        ['content hash', e.content_hash],
        ['created', e.created_at],
        ['updated', e.updated_at],
      ]),
    );
  });
}

function drawTree(node: TreeEntry, prefix: string, lines: string[]): void {
  const children = node.children ?? [];
  children.forEach((child, i) => {
    const last = i === children.length - 1;
    const more = child.type === 'folder' && child.children === undefined && (child.children_count ?? 0) > 0 ? ` (${child.children_count} item${child.children_count === 1 ? '' : 's'})` : '';
    lines.push(`${prefix}${last ? '└── ' : '├── '}${shownName(child)}${more}`);
    drawTree(child, prefix + (last ? '    ' : '│   '), lines);
  });
}

async function tree(io: CliIo, path: string | undefined, flags: ClientFlags & { depth?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const depth = flags.depth === undefined ? -1 : intArgument(flags.depth, '--depth', 1);
    const { data } = await ctx.api.get<TreeEntry>(await ctx.contentPath('tree'), { path: remotePath(path), max_depth: depth });
    ctx.out.result(data, () => {
      const lines = [data.path ? shownName(data) : '/'];
      drawTree(data, '', lines);
      ctx.out.line(lines.join('\n'));
    });
  });
}

/** Reading: `cns ls`, `cns cat`, `cns stat`, `cns tree`. */
export function registerBrowseCommands(program: Command, io: CliIo): void {
  clientOptions(program.command('ls').description('list a folder (default: the project root)').argument('[path]', 'folder path')).action(withIo(io, ls));
  clientOptions(program.command('cat').description('print a node\'s content (JSON pretty-printed, Markdown as text, files as bytes)').argument('<path>', 'node path'))
    .option('--version <n>', 'print an earlier version')
    .action(withIo(io, cat));
  clientOptions(program.command('stat').description('show a node\'s metadata').argument('<path>', 'node path')).action(withIo(io, stat));
  clientOptions(program.command('tree').description('show a folder\'s tree').argument('[path]', 'folder path (default: the project root)'))
    .option('-d, --depth <n>', 'levels to show (default: all)')
    .action(withIo(io, tree));
}
