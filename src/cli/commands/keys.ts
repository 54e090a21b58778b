import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { globalOptions } from '../client/globalOptions.ts';
import { formatTime } from '../client/output.ts';
import { remotePath } from '../client/remotePath.ts';

interface Connection {
  id: string;
  project_id: string;
  kind: string;
  name: string;
  scope_path: string;
  mode: 'read' | 'read_write';
  status: string;
  key_prefix: string | null;
  created_at: string;
  last_used_at: string | null;
}

const scopeOf = (c: Connection) => `/${c.scope_path}`;

async function list(io: CliIo, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const { data } = await ctx.api.get<{ connections: Connection[]; total: number }>('/connections/', { project_id: project.id, kind: 'api', limit: 200 });
    ctx.out.result(data, () => {
      if (data.connections.length === 0) return ctx.out.line('No access keys: create one with `cns keys create NAME`');
      ctx.out.table(
        ['ID', 'NAME', 'SCOPE', 'MODE', 'STATUS', 'KEY', 'LAST USED'],
        data.connections.map((c) => [c.id, c.name, scopeOf(c), c.mode, c.status, c.key_prefix ? `${c.key_prefix}…` : '-', formatTime(c.last_used_at)]),
      );
    });
  });
}

async function create(io: CliIo, name: string, flags: ClientFlags & { scope?: string; readOnly?: boolean }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const body = { project_id: project.id, name, kind: 'api', scope_path: flags.scope === undefined ? undefined : remotePath(flags.scope), mode: flags.readOnly ? 'read' : 'read_write' };
    const { data } = await ctx.api.post<{ connection: Connection; key: string }>('/connections/', body);
    ctx.out.result(data, () => {
      const c = data.connection;
      ctx.out.line(`Created key "${c.name}" (${c.id}): scope ${scopeOf(c)}, ${c.mode === 'read' ? 'read-only' : 'read-write'}`);
      ctx.out.line(data.key);
      ctx.out.line('The key is shown only this once: store it now (e.g. `cns login --key KEY`, or CNS_TOKEN).');
    });
  });
}

async function revoke(io: CliIo, id: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data } = await ctx.api.delete<{ id: string; deleted: boolean }>(`/connections/${encodeURIComponent(id)}`);
    ctx.out.result(data, () => ctx.out.line(`Revoked key ${data.id}: it no longer works`));
  });
}

/** `cns keys [ls|create|revoke]`: the project's access keys (`api` connections). */
export function registerKeysCommands(program: Command, io: CliIo): void {
  const keys = globalOptions(program.command('keys').description('manage the project\'s access keys (`cns keys` lists them)'));
  clientOptions(keys.command('ls', { isDefault: true }).description('list the project\'s access keys')).action(withIo(io, list));
  clientOptions(keys.command('create').description('create an access key (printed once)').argument('<name>', 'a name to recognise it by'))
    .option('--scope <path>', 'limit the key to this folder (default: the whole project)')
    .option('--read-only', 'the key may only read')
    .action(withIo(io, create));
  clientOptions(keys.command('revoke').description('revoke (delete) an access key').argument('<id>', 'key id (see `cns keys ls`)'), { project: false }).action(withIo(io, revoke));
}
