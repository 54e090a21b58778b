import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { CliError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import { globalOptions } from '../client/globalOptions.ts';
import { resolveProject } from '../client/projectRef.ts';
import type { CliIo } from '../io.ts';

interface ClusterNode {
  id: string;
  url: string;
  state: string;
  heartbeat_age_ms: number;
  version: string;
  started_at: string;
  projects: { primary: number; copies: number };
}

interface Cluster {
  node: string | null;
  cluster: boolean;
  nodes: ClusterNode[];
}

interface Move {
  project_id: string;
  kind: 'replica' | 'primary' | 'switchover';
  from: string | null;
  to: string;
  primary: string;
  epoch: number;
  copies: string[];
  duration_ms: number;
}

/** A drain is followed this often until the node is left. */
const DRAIN_POLL_MS = 500;

async function status(io: CliIo, flags: ClientFlags): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data } = await ctx.api.get<Cluster>('/cluster');
    ctx.out.result(data, () => {
      if (!data.cluster) ctx.out.line('Not a cluster: this service holds every project itself.');
      ctx.out.table(
        ['NODE', 'STATE', 'URL', 'HEARTBEAT', 'PRIMARY', 'COPIES', 'VERSION'],
        data.nodes.map((n) => [`${n.id}${n.id === data.node ? ' *' : ''}`, n.state, n.url, `${n.heartbeat_age_ms} ms`, String(n.projects.primary), String(n.projects.copies), n.version]),
      );
    });
  });
}

async function move(io: CliIo, project: string, flags: ClientFlags & { to: string; from?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const p = await resolveProject(ctx.api, project);
    const { data } = await ctx.api.post<Move>('/cluster/moves', { project_id: p.id, to: flags.to, from: flags.from });
    ctx.out.result(data, () => {
      const what = data.kind === 'switchover' ? `${data.to} writes it now (every copy stays)` : data.kind === 'primary' ? `the primary's copy moved from ${data.from} to ${data.to}, which writes it now` : `the copy on ${data.from} moved to ${data.to}`;
      ctx.out.line(`Moved ${p.name}: ${what}; epoch ${data.epoch}, copies ${data.copies.join(', ')} (${data.duration_ms} ms)`);
    });
  });
}

async function drain(io: CliIo, node: string, flags: ClientFlags & { wait?: boolean; timeout?: string }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const { data } = await ctx.api.post<{ node: string; state: string }>(`/cluster/nodes/${encodeURIComponent(node)}/drain`);
    if (flags.wait === false || data.state === 'left') return ctx.out.result(data, () => ctx.out.line(`Node ${node} is ${data.state}`));
    const end = Date.now() + Number(flags.timeout ?? 1800) * 1000;
    let last = '';
    for (;;) {
      const { data: cluster } = await ctx.api.get<Cluster>('/cluster');
      const n = cluster.nodes.find((m) => m.id === node);
      if (!n || n.state === 'left') break;
      const line = `draining ${node}: ${n.projects.copies} copies left (${n.projects.primary} as primary)`;
      if (line !== last && !flags.json) io.stderr.write(`${line}\n`);
      last = line;
      if (n.state !== 'draining') throw new CliError(`node ${node} is ${n.state}: the drain stopped`, ExitCode.FAILURE);
      if (Date.now() > end) throw new CliError(`node ${node} is still draining after ${flags.timeout ?? 1800} s`, ExitCode.FAILURE);
      await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
    }
    ctx.out.result({ node, state: 'left' }, () => ctx.out.line(`Node ${node} is drained (left): it holds no copy and can be stopped`));
  });
}

/** `cns cluster [status|move|drain]`: a cluster's nodes, and moving projects between them (administrators). */
export function registerClusterCommands(program: Command, io: CliIo): void {
  const cluster = globalOptions(program.command('cluster').description('the nodes of a cluster; moving projects and draining nodes (administrators; `cns cluster` shows the status)'));
  clientOptions(cluster.command('status', { isDefault: true }).description('the nodes, their state and the projects each holds'), { project: false }).action(withIo(io, status));
  clientOptions(cluster.command('move').description("move a project's copy to another node while it is written").argument('<project>', 'project id or name'), { project: false })
    .requiredOption('--to <node>', 'the node that takes the copy (and, unless --from names a replica, writes the project)')
    .option('--from <node>', "the node whose copy leaves (default: the primary's; if --to already holds a copy, it only becomes the primary)")
    .action(withIo(io, move));
  clientOptions(cluster.command('drain').description('move every copy off a node, then mark it left (it can then be stopped)').argument('<node>', 'node id (CNS_NODE_ID)'), { project: false })
    .option('--no-wait', 'answer once the node is draining, without following the drain')
    .option('--timeout <seconds>', 'how long to follow the drain (default 1800)')
    .action(withIo(io, drain));
}
