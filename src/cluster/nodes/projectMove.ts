import { performance } from 'node:perf_hooks';
import type { MetadataDb } from '../../db/metadata/metadataStore.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { Logger } from '../../logging/logger.ts';
import { ClusterLease } from '../coordinatorLease.ts';
import type { ClusterNode } from './clusterNode.ts';
import { dropCopy, handOff, indexedCopy, syncCopy } from './copySteps.ts';
import { DROP_COPY_PATH, HANDOFF_PATH, INDEXED_PATH, SYNC_COPY_PATH } from './replicaHttpClient.ts';

/** What a move does: a replica's copy goes to another node, the primary's copy goes (the new node writes), or only the primary changes. */
export type MoveKind = 'replica' | 'primary' | 'switchover';

export interface MoveResult {
  project_id: string;
  kind: MoveKind;
  /** The node whose copy left (null for a switchover: every copy stays). */
  from: string | null;
  to: string;
  primary: string;
  epoch: number;
  copies: string[];
  duration_ms: number;
}

/** One move of a project at a time in the cluster; a runner that dies lets go after this long. */
const MOVE_LEASE_MS = 60_000;
/** How long the primary may take to bring a new copy up to date (a fetch of the whole project). */
const SYNC_TIMEOUT_MS = 30 * 60_000;
const HANDOFF_TIMEOUT_MS = 60_000;

const conflict = (message: string, details: Record<string, unknown>) => new DomainError('CONFLICT', message, details);

/**
 * Moving a project's copy from one node to another while it is written (docs/architecture.md,
 * "Several nodes"). `to` must be up. Without `from`: when `to` already holds a copy it becomes the
 * primary and every copy stays (a switchover); otherwise the primary's copy moves to `to`, which
 * then writes the project. With `from`: that copy moves to `to` (which must not hold one yet),
 * and when `from` is the primary, `to` takes over as primary.
 *
 * The steps, each safe to stop after (at worst one extra copy is left): `to` joins the copies
 * (R+1 of them; writes need a majority of R+1 meanwhile); the primary brings it to its tips
 * (shipment or git fetch) while writes go on; for the primary, a planned switchover to `to`
 * (copySteps.ts handOff); then `from` leaves the copies and its repository is removed (at once,
 * or at its next start when it cannot be reached). It runs on the node asked, under a lease per
 * project in PostgreSQL, so two moves of one project never interleave.
 */
export class ProjectMoves {
  constructor(
    private readonly node: ClusterNode,
    private readonly o: { db: MetadataDb; logger: Logger },
  ) {}

  async move(project: string, to: string, from?: string): Promise<MoveResult> {
    const node = this.node;
    if (from !== undefined && from === to) throw invalidField('from', 'from and to name the same node.');
    const exists = await this.o.db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
    if (!exists) throw new DomainError('NOT_FOUND', 'Project not found.', { project_id: project });
    await node.refreshNodes();
    const members = new Map(node.members().map((n) => [n.id, n]));
    for (const n of [to, from]) if (n !== undefined && !members.has(n)) throw new DomainError('NOT_FOUND', `Node ${n} not found.`, { node: n });
    if (members.get(to)!.state !== 'up') throw conflict(`Node ${to} is ${members.get(to)!.state}: only a node that is up takes copies.`, { reason: 'NODE_NOT_UP', node: to });

    const lease = new ClusterLease(this.o.db, `move:${project}`, `${node.me}:${node.incarnation ?? ''}`, MOVE_LEASE_MS);
    if (!(await lease.renew())) throw conflict('Another move of this project is running; try again once it is done.', { reason: 'MOVE_RUNNING', project_id: project });
    const started = performance.now();
    // A fetch of a large project outlasts the lease: it is renewed while the move runs.
    const keep = setInterval(() => void lease.renew().catch(() => undefined), MOVE_LEASE_MS / 3);
    try {
      const p = await node.placements.get(project);
      if (!p) throw conflict('The project has no placement yet (no node has served it): write to it once, then move it.', { reason: 'NOT_PLACED', project_id: project });
      if (p.state !== 'ok' || p.primary === null) throw new DomainError('SERVICE_UNAVAILABLE', 'The project’s primary is being elected; retry in a moment.', { reason: 'ELECTING', project_id: project }, { 'retry-after': '1' });
      const primary = p.primary;
      if (members.get(primary)?.state === 'down') throw conflict(`The project’s primary ${primary} is down: a failover elects another first, then the project can move.`, { reason: 'PRIMARY_DOWN', project_id: project });
      let kind: MoveKind;
      let leaving: string | null;
      if (from === undefined) {
        if (primary === to) throw conflict(`Node ${to} already writes the project.`, { reason: 'ALREADY_PRIMARY', project_id: project, node: to });
        kind = p.copies.includes(to) ? 'switchover' : 'primary';
        leaving = kind === 'primary' ? primary : null;
      } else {
        if (!p.copies.includes(from)) throw conflict(`Node ${from} holds no copy of the project.`, { reason: 'NOT_A_COPY', project_id: project, node: from });
        if (p.copies.includes(to)) throw conflict(`Node ${to} already holds a copy of the project.`, { reason: 'ALREADY_A_COPY', project_id: project, node: to });
        kind = from === primary ? 'primary' : 'replica';
        leaving = from;
      }
      this.o.logger.info({ project, kind, from: leaving, to, primary, epoch: p.epoch }, 'cluster: a move starts');

      if (!p.copies.includes(to)) {
        await node.placements.addCopies(project, [to]);
        node.announce(project);
        await this.on(primary, SYNC_COPY_PATH, { project, epoch: p.epoch, node: to }, SYNC_TIMEOUT_MS, () => syncCopy(node, project, p.epoch, to));
        await lease.renew();
      }
      let epoch = p.epoch;
      let writer = primary;
      if (kind !== 'replica') {
        // The new primary indexes what it fetched before the old one holds its writes for the switchover.
        await this.on(to, INDEXED_PATH, { project, epoch }, SYNC_TIMEOUT_MS, () => indexedCopy(node, project));
        const r = (await this.on(primary, HANDOFF_PATH, { project, epoch, node: to }, HANDOFF_TIMEOUT_MS, () => handOff(node, project, epoch, to))) as { epoch: number; primary: string };
        epoch = r.epoch;
        writer = r.primary;
      }
      if (leaving !== null) {
        if (!(await node.placements.removeCopy(project, leaving))) throw new DomainError('SERVICE_UNAVAILABLE', `The placement changed meanwhile; ${leaving} still holds a copy (and ${to} one more).`, { reason: 'MOVE_INTERRUPTED', project_id: project }, { 'retry-after': '1' });
        node.announce(project);
        // Best effort: a node that cannot be reached removes the copy at its next start.
        await this.on(leaving, DROP_COPY_PATH, { project, epoch }, HANDOFF_TIMEOUT_MS, () => dropCopy(node, project)).catch((err: unknown) => {
          this.o.logger.warn({ err: { message: (err as Error).message }, project, node: leaving }, 'cluster: a moved copy could not be removed yet; its node removes it at its next start');
        });
      }
      const after = await node.placements.get(project);
      const result: MoveResult = { project_id: project, kind, from: leaving, to, primary: after?.primary ?? writer, epoch: after?.epoch ?? epoch, copies: after?.copies ?? [], duration_ms: Math.round(performance.now() - started) };
      this.o.logger.info(result, 'cluster: a move is done');
      return result;
    } finally {
      clearInterval(keep);
      await lease.release().catch(() => undefined);
    }
  }

  /** A step on `target`: here directly, elsewhere by a signed internal call. */
  private on(target: string, path: string, body: object, timeoutMs: number, here: () => Promise<unknown>): Promise<unknown> {
    return target === this.node.me ? here() : this.node.call(target, path, body, timeoutMs);
  }
}
