import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { formatBytes, formatTime } from '../client/output.ts';
import { intArgument, requiredRemotePath } from '../client/remotePath.ts';
import type { Entry } from './browse.ts';

interface Version {
  version: number;
  actor_type: string;
  author: string | null;
  authored_by: string | null;
  created_at: string;
  message: string | null;
  size: number | null;
  operation: string;
  project_version: number;
}

type Diff =
  | { kind: 'text' | 'json'; unified_diff: string; added_lines: number; removed_lines: number }
  | { kind: 'binary'; from: { size: number; sha256: string }; to: { size: number; sha256: string }; identical: boolean };

/** Who made a version, and the author a pushed commit named when that is someone else. */
const madeBy = (v: Version) => `${v.author ?? v.actor_type}${v.authored_by ? ` (authored by ${v.authored_by})` : ''}`;

async function log(io: CliIo, path: string, flags: ClientFlags & { limit?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const query = { path: requiredRemotePath(path), limit: flags.limit === undefined ? undefined : intArgument(flags.limit, '--limit', 1) };
    const { data } = await ctx.api.get<{ path: string; versions: Version[]; total: number; current_version: number }>(await ctx.contentPath('versions'), query);
    ctx.out.result(data, () => {
      ctx.out.table(
        ['VERSION', 'DATE', 'AUTHOR', 'OPERATION', 'SIZE', 'MESSAGE'],
        data.versions.map((v) => [
          `v${v.version}${v.version === data.current_version ? '*' : ''}`,
          formatTime(v.created_at),
          madeBy(v),
          v.operation,
          formatBytes(v.size),
          (v.message ?? '').split('\n')[0]!,
        ]),
      );
      if (data.total > data.versions.length) ctx.out.line(`(${data.versions.length} of ${data.total} versions; --limit shows more)`);
    });
  });
}

async function diff(io: CliIo, path: string, v1: string, v2: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const query = { path: requiredRemotePath(path), v1: intArgument(v1, 'V1', 1), v2: intArgument(v2, 'V2', 1) };
    const { data } = await ctx.api.get<Diff>(await ctx.contentPath('diff'), query);
    ctx.out.result(data, () => {
      if (data.kind === 'binary') {
        ctx.out.line(data.identical ? 'The versions are identical' : `Binary versions differ: ${formatBytes(data.from.size)} → ${formatBytes(data.to.size)}`);
        ctx.out.line(`  v${query.v1} sha256 ${data.from.sha256}\n  v${query.v2} sha256 ${data.to.sha256}`);
      } else {
        ctx.out.raw(data.unified_diff.endsWith('\n') ? data.unified_diff : data.unified_diff + '\n');
      }
    });
  });
}

async function rollback(io: CliIo, path: string, version: string, flags: ClientFlags & { message?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const body = { path: requiredRemotePath(path), version: intArgument(version, 'VERSION', 1), message: flags.message };
    const { data } = await ctx.api.post<Entry & { changed: boolean; restored_version: number }>(await ctx.contentPath('rollback'), body);
    ctx.out.result(data, () =>
      ctx.out.line(
        data.changed
          ? `Rolled ${data.path} back to the content of version ${data.restored_version}: now version ${data.version}`
          : `${data.path} already has the content of version ${data.restored_version}`,
      ),
    );
  });
}

/** History: `cns log`, `cns diff`, `cns rollback`. */
export function registerHistoryCommands(program: Command, io: CliIo): void {
  clientOptions(program.command('log').description('list a node\'s versions (newest first; * marks the current one)').argument('<path>', 'node path'))
    .option('-n, --limit <n>', 'how many versions (default 50)')
    .action(withIo(io, log));
  clientOptions(program.command('diff').description('compare two versions of a node').argument('<path>', 'node path').argument('<v1>', 'older version').argument('<v2>', 'newer version')).action(withIo(io, diff));
  clientOptions(program.command('rollback').description('write the content of an earlier version as a new version').argument('<path>', 'node path').argument('<version>', 'version to go back to'))
    .option('-m, --message <message>', 'version message')
    .action(withIo(io, rollback));
}
