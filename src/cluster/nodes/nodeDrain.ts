import { performance } from 'node:perf_hooks';
import type { MetadataDb } from '../../db/metadata/metadataStore.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Logger } from '../../logging/logger.ts';
import { changeNodeState } from '../membership.ts';
import { rendezvousRank } from '../rendezvous.ts';
import type { ClusterNode } from './clusterNode.ts';

/** Copies a drain moves at once: writes go on meanwhile, so a few at a time. */
const DRAIN_BATCH = 2;
/** After a round that could not move everything, the next waits this long (a round starts at most every heartbeat otherwise). */
const RETRY_AFTER_MS = 2_000;

/**
 * Draining a node (docs/architecture.md, "Several nodes"): the node is marked `draining` (it takes
 * no new copies: placements, re-replication and moves skip it, and failover leaves it alone), then
 * the coordinator moves every copy it holds to a live node without one, two at a time, replicas
 * first, its primaries by planned switchover. Once it holds nothing it is `left`: it still answers
 * and routes requests, holds no project, and can be stopped. The state in PostgreSQL is the
 * progress: a coordinator that takes over goes on where the last one stopped.
 */
export class NodeDrains {
  private running: Promise<void> | null = null;
  private stopped = false;
  private waitUntil = 0;

  constructor(
    private readonly node: ClusterNode,
    private readonly o: { db: MetadataDb; logger: Logger },
  ) {}

  /** Marks `id` draining (the API's request); the coordinator does the moves. */
  async start(id: string): Promise<{ state: 'draining' | 'left' }> {
    await this.node.refreshNodes();
    const n = this.node.members().find((m) => m.id === id);
    if (!n) throw new DomainError('NOT_FOUND', `Node ${id} not found.`, { node: id });
    if (n.state === 'left' || n.state === 'draining') return { state: n.state };
    if (n.state === 'down') throw new DomainError('CONFLICT', `Node ${id} is down: its primaries fail over and its copies are replaced after CNS_CLUSTER_REPLACE_AFTER_S; a drain needs it up.`, { reason: 'NODE_DOWN', node: id });
    const others = this.node.liveNodes().filter((m) => m !== id);
    if (others.length < this.node.settings.replicas) {
      throw new DomainError('CONFLICT', `Draining ${id} would leave its projects with fewer than ${this.node.settings.replicas} copies: ${others.length} other node(s) are up. Add a node first.`, { reason: 'NO_ROOM', node: id });
    }
    if (!(await changeNodeState(this.o.db, id, ['up'], 'draining'))) throw new DomainError('CONFLICT', `Node ${id} changed state meanwhile; try again.`, { reason: 'STATE_CHANGED', node: id });
    this.o.logger.info({ node: id }, 'cluster: a node is draining');
    await this.node.refreshNodes();
    return { state: 'draining' };
  }

  /** On the coordinator, each heartbeat: one round over the draining nodes at a time. */
  kick(): void {
    if (this.running || this.stopped || performance.now() < this.waitUntil) return;
    if (!this.node.members().some((n) => n.state === 'draining')) return;
    this.running = this.round().finally(() => (this.running = null));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async round(): Promise<void> {
    let stuck = false;
    try {
      for (const d of this.node.members().filter((n) => n.state === 'draining')) {
        const held = await this.node.placements.heldBy(d.id);
        if (held.length === 0) {
          if (await changeNodeState(this.o.db, d.id, ['draining'], 'left')) this.o.logger.info({ node: d.id }, 'cluster: a node is drained: it holds no copy any more');
          continue;
        }
        for (let i = 0; i < held.length && !this.stopped; i += DRAIN_BATCH) {
          const moved = await Promise.all(held.slice(i, i + DRAIN_BATCH).map((project) => this.moveOff(project, d.id)));
          if (moved.includes(false)) stuck = true;
        }
      }
    } catch (err) {
      stuck = true;
      this.o.logger.warn({ err: { message: (err as Error).message } }, 'cluster: a drain round failed');
    }
    if (stuck) this.waitUntil = performance.now() + RETRY_AFTER_MS;
  }

  /** One copy off the draining node, to the best-ranked live node without one; false when it stays for now. */
  private async moveOff(project: string, from: string): Promise<boolean> {
    const p = await this.node.placements.get(project);
    if (!p || !p.copies.includes(from)) return true;
    const [to] = rendezvousRank(project, this.node.liveNodes().filter((n) => n !== from && !p.copies.includes(n)), 1);
    if (!to) {
      this.o.logger.warn({ project, node: from }, 'cluster: no live node can take a copy of a draining node');
      return false;
    }
    try {
      await this.node.moves.move(project, to, from);
      return true;
    } catch (err) {
      this.o.logger.warn({ err: { message: (err as Error).message }, project, from, to }, 'cluster: a drain could not move a copy yet; retrying');
      return false;
    }
  }
}
