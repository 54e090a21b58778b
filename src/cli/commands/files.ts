import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { formatTime } from '../client/output.ts';
import { requiredRemotePath } from '../client/remotePath.ts';
import type { Entry } from './browse.ts';

interface MessageFlags extends ClientFlags {
  message?: string;
}

interface TrashItem {
  id: string;
  trash_path: string;
  original_path: string | null;
  name: string;
  type: string;
  deleted_at: string;
  deleted_by: string | null;
}

async function mkdir(io: CliIo, path: string, flags: MessageFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data, message } = await ctx.api.post<Entry & { changed: boolean }>(await ctx.contentPath('mkdir'), { path: requiredRemotePath(path), message: flags.message });
    ctx.out.result(data, () => ctx.out.line(`${message}: ${data.path}/`));
  });
}

async function mv(io: CliIo, from: string, to: string, flags: MessageFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const body = { old_path: requiredRemotePath(from, 'SOURCE'), new_path: requiredRemotePath(to, 'DESTINATION'), message: flags.message };
    const { data } = await ctx.api.post<Entry & { old_path: string }>(await ctx.contentPath('mv'), body);
    ctx.out.result(data, () => ctx.out.line(`Moved ${data.old_path} → ${data.path}`));
  });
}

async function rm(io: CliIo, path: string, flags: MessageFlags & { permanent?: boolean }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const body = { path: requiredRemotePath(path), permanent: Boolean(flags.permanent), message: flags.message };
    const { data } = await ctx.api.post<{ path: string; permanent: boolean; trash_path: string | null }>(await ctx.contentPath('rm'), body);
    ctx.out.result(data, () =>
      ctx.out.line(data.permanent ? `Deleted ${data.path} permanently` : `Moved ${data.path} to the trash (restore with \`cns restore ${data.trash_path} ${data.path}\`)`),
    );
  });
}

async function trash(io: CliIo, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data } = await ctx.api.get<{ items: TrashItem[]; total: number }>(await ctx.contentPath('trash'));
    ctx.out.result(data, () => {
      if (data.items.length === 0) return ctx.out.line('The trash is empty');
      ctx.out.table(
        ['DELETED', 'TYPE', 'TRASH PATH', 'ORIGINAL PATH'],
        data.items.map((t) => [formatTime(t.deleted_at), t.type, t.trash_path, t.original_path ?? '-']),
      );
    });
  });
}

async function restore(io: CliIo, trashPath: string, originalPath: string, flags: MessageFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const body = { trash_path: requiredRemotePath(trashPath, 'TRASH_PATH'), original_path: requiredRemotePath(originalPath, 'ORIGINAL_PATH'), message: flags.message };
    const { data } = await ctx.api.post<Entry & { restored_from: string }>(await ctx.contentPath('restore'), body);
    ctx.out.result(data, () => ctx.out.line(`Restored ${data.path} (from ${data.restored_from})`));
  });
}

/** Changing the tree: `cns mkdir`, `cns mv`, `cns rm`, `cns trash`, `cns restore`. */
export function registerFileCommands(program: Command, io: CliIo): void {
  const message = (c: Command) => c.option('-m, --message <message>', 'version message');
  message(clientOptions(program.command('mkdir').description('create a folder (and its parents)').argument('<path>', 'folder path'))).action(withIo(io, mkdir));
  message(clientOptions(program.command('mv').description('move or rename a node').argument('<source>', 'current path').argument('<destination>', 'new path'))).action(withIo(io, mv));
  message(clientOptions(program.command('rm').description('move a node to the trash (or delete it for good with --permanent)').argument('<path>', 'node path')))
    .option('--permanent', 'delete permanently instead of moving to the trash')
    .action(withIo(io, rm));
  clientOptions(program.command('trash').description('list the trash')).action(withIo(io, trash));
  message(
    clientOptions(
      program
        .command('restore')
        .description('restore a node from the trash')
        .argument('<trash_path>', 'its path in the trash (see `cns trash`)')
        .argument('<original_path>', 'where to put it back'),
    ),
  ).action(withIo(io, restore));
}
