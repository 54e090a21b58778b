import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { globalOptions } from '../client/globalOptions.ts';
import { formatTime } from '../client/output.ts';
import { remotePath } from '../client/remotePath.ts';

interface Hook {
  id: string;
  url: string;
  events: string[];
  path_prefix: string;
  state: string;
  disabled_reason: string | null;
  pending_deliveries: number;
  secret?: string | null;
}

interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  created_at: string;
}

/** The events `--events` takes when none is named: every content event. */
const CONTENT_EVENTS = ['content.created', 'content.updated', 'content.deleted', 'content.moved', 'content.restored', 'version.rolled_back'];

const hooksPath = (projectId: string) => `/projects/${encodeURIComponent(projectId)}/webhooks`;
const stateOf = (h: Hook) => (h.state === 'disabled' ? `disabled (${h.disabled_reason})` : h.state);

async function list(io: CliIo, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const { data } = await ctx.api.get<{ webhooks: Hook[]; total: number }>(hooksPath(project.id));
    ctx.out.result(data, () => {
      if (data.webhooks.length === 0) return ctx.out.line('No webhooks: create one with `cns webhooks create URL`');
      ctx.out.table(
        ['ID', 'URL', 'EVENTS', 'PATH', 'STATE', 'PENDING'],
        data.webhooks.map((h) => [h.id, h.url, h.events.join(','), `/${h.path_prefix}`, stateOf(h), String(h.pending_deliveries)]),
      );
    });
  });
}

async function create(io: CliIo, url: string, flags: ClientFlags & { events?: string; path?: string; secret?: string; inactive?: boolean }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const events = flags.events ? flags.events.split(',').map((e) => e.trim()).filter(Boolean) : CONTENT_EVENTS;
    const body = { url, events, path_prefix: flags.path === undefined ? undefined : remotePath(flags.path), secret: flags.secret, active: flags.inactive ? false : undefined };
    const { data } = await ctx.api.post<Hook>(hooksPath(project.id), body);
    ctx.out.result(data, () => {
      ctx.out.line(`Created webhook ${data.id} → ${data.url} (${data.events.join(', ')}; path /${data.path_prefix})`);
      ctx.out.line(`Secret: ${data.secret}`);
      ctx.out.line('The secret is shown only this once: the receiver checks X-Cns-Signature-256 with it.');
    });
  });
}

async function remove(io: CliIo, id: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const { data } = await ctx.api.delete<{ id: string; deleted: boolean }>(`${hooksPath(project.id)}/${encodeURIComponent(id)}`);
    ctx.out.result(data, () => ctx.out.line(`Deleted webhook ${data.id}`));
  });
}

async function deliveries(io: CliIo, id: string, flags: ClientFlags & { limit?: string; status?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const { data } = await ctx.api.get<{ deliveries: Delivery[]; total: number }>(`${hooksPath(project.id)}/${encodeURIComponent(id)}/deliveries`, {
      limit: flags.limit ?? '20',
      status: flags.status,
    });
    ctx.out.result(data, () => {
      if (data.deliveries.length === 0) return ctx.out.line('No deliveries yet');
      ctx.out.table(
        ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'CODE', 'MS', 'CREATED', 'ERROR'],
        data.deliveries.map((d) => [d.id, d.event, d.status, String(d.attempts), d.response_status === null ? '-' : String(d.response_status), d.duration_ms === null ? '-' : String(d.duration_ms), formatTime(d.created_at), d.error ?? '']),
      );
    });
  });
}

async function redeliver(io: CliIo, id: string, deliveryId: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const { data } = await ctx.api.post<Delivery>(`${hooksPath(project.id)}/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`);
    ctx.out.result(data, () => ctx.out.line(`Queued redelivery ${data.id} of ${deliveryId}`));
  });
}

async function ping(io: CliIo, id: string, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const { data } = await ctx.api.post<Delivery>(`${hooksPath(project.id)}/${encodeURIComponent(id)}/ping`);
    ctx.out.result(data, () =>
      ctx.out.line(
        data.status === 'delivered'
          ? `Ping delivered: ${data.response_status} in ${data.duration_ms} ms (${data.id})`
          : `Ping failed: ${data.error ?? data.response_status} (${data.id})`,
      ),
    );
  });
}

/** `cns webhooks [list|create|delete|deliveries|redeliver|ping]`: the project's outgoing webhooks. */
export function registerWebhooksCommands(program: Command, io: CliIo): void {
  const hooks = globalOptions(program.command('webhooks').description("manage the project's outgoing webhooks (`cns webhooks` lists them)"));
  clientOptions(hooks.command('list', { isDefault: true }).alias('ls').description("list the project's webhooks")).action(withIo(io, list));
  clientOptions(hooks.command('create').description('create a webhook (its secret is printed once)').argument('<url>', 'where deliveries are POSTed'))
    .option('--events <list>', `comma-separated events (default: ${CONTENT_EVENTS.join(',')}); also sync.run_finished, ingest.task_finished`)
    .option('--path <folder>', 'only changes at or beneath this folder')
    .option('--secret <secret>', 'the signing secret (default: generated)')
    .option('--inactive', 'create it switched off')
    .action(withIo(io, create));
  clientOptions(hooks.command('delete').alias('rm').description('delete a webhook').argument('<id>', 'webhook id (see `cns webhooks`)')).action(withIo(io, remove));
  clientOptions(hooks.command('deliveries').description("a webhook's deliveries, newest first").argument('<id>', 'webhook id'))
    .option('--limit <n>', 'how many (default 20, at most 200)')
    .option('--status <status>', 'only pending, delivered or failed ones')
    .action(withIo(io, deliveries));
  clientOptions(hooks.command('redeliver').description('send a delivery again (a new delivery id, the same body)').argument('<id>', 'webhook id').argument('<delivery>', 'delivery id'))
    .action(withIo(io, redeliver));
  clientOptions(hooks.command('ping').description('send a ping event now and show how it went').argument('<id>', 'webhook id')).action(withIo(io, ping));
}
