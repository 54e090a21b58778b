import { DomainError } from '../../errors/domainError.ts';
import { readRef } from '../../content/git/refs.ts';
import { writeCopyState } from '../replication/copyState.ts';
import { REPLICATED_REFS, type Tips } from '../replication/replicator.ts';
import type { ClusterNode, SealReport } from './clusterNode.ts';
import { PROMOTE_PATH, SEAL_PATH } from './replicaHttpClient.ts';

/**
 * The steps of a move (projectMove.ts) that run on a node holding the project: on its primary,
 * bringing a new copy up to date and handing the project over to another copy; on the copy that
 * leaves, removing it. Each checks the placement first, so a step sent late or twice changes nothing.
 */

const conflict = (message: string, project: string, reason: string) => new DomainError('CONFLICT', message, { reason, project });
const unavailable = (message: string, project: string) => new DomainError('SERVICE_UNAVAILABLE', message, { reason: 'MOVE_INTERRUPTED', project }, { 'retry-after': '1' });

/**
 * On the primary: `to` (already in the placement's copies) receives the whole history and is
 * counted by replication from now on. The placement is read again first, so every write replicated
 * after this returns counts the new copy; every write before it is in the tips `to` confirmed.
 */
export async function syncCopy(node: ClusterNode, project: string, epoch: number, to: string): Promise<{ tips: Tips }> {
  node.forget(project);
  const p = await node.placementOf(project, true, false, false);
  if (!p || p.primary !== node.me || p.epoch !== epoch) throw unavailable('This node no longer writes the project at that epoch; the move stopped.', project);
  if (!p.copies.includes(to)) throw conflict(`${to} is not among the project's copies.`, project, 'NOT_A_COPY');
  const repo = node.store.repository(project);
  if (!(await node.replicator.syncCopy(project, repo, to, epoch))) throw unavailable(`${to} could not be brought up to date; nothing was removed.`, project);
  return { tips: node.replicator.confirmedTips(project, to) ?? {} };
}

/**
 * On the primary S at `epoch`: a planned switchover to the copy `to` (docs/architecture.md,
 * "Several nodes"). With S's writes held (each earlier one acknowledged or refused, the tip still):
 * `to` is brought to S's tip; epoch E+1 is reserved and announced (requests anywhere wait for the
 * new primary); enough other copies are sealed at E+1 that no write of S's epoch can reach a quorum
 * any more; `to` is committed and promoted; S's copy becomes a replica of E+1. Writes queued on S
 * meanwhile are refused (503, retried by clients) once its hold ends. If `to` cannot take over, S
 * takes E+1 itself: an epoch, once reserved, always gets a primary.
 */
export async function handOff(node: ClusterNode, project: string, epoch: number, to: string): Promise<{ epoch: number; primary: string }> {
  return node.store.holdWrites(project, (repo) =>
    node.holdingRequests(project, async () => {
      const p = await node.placements.get(project);
      if (!p || p.primary !== node.me || p.epoch !== epoch || p.state !== 'ok') throw unavailable('This node no longer writes the project at that epoch; the move stopped.', project);
      if (!p.copies.includes(to)) throw conflict(`${to} is not among the project's copies.`, project, 'NOT_A_COPY');
      const tip: Tips = {};
      for (const r of REPLICATED_REFS) tip[r] = readRef(repo.gitdir, r);
      // From what `to` confirmed last: replication kept it current, so this is one step at most.
      if (!(await node.replicator.syncCopy(project, repo, to, epoch, false))) throw unavailable(`${to} could not be brought to this primary's tip; the primary did not change.`, project);
      if (!(await node.placements.reserveFrom(project, epoch, node.me))) throw unavailable('The placement changed meanwhile; the primary did not change.', project);
      const next = epoch + 1;
      node.announce(project);
      let primary = to;
      try {
        const others = p.copies.filter((n) => n !== node.me);
        const alive = new Set(node.aliveNodes());
        const reports = await Promise.all(
          others.filter((n) => alive.has(n)).map(async (n) => {
            try {
              const r = (await node.call(n, SEAL_PATH, { project, epoch: next })) as SealReport;
              return { node: n, ...r };
            } catch (err) {
              node.logger.warn({ err: { message: (err as Error).message }, project, node: n }, 'cluster: a copy could not be sealed for a switchover');
              return null;
            }
          }),
        );
        const sealed = reports.filter((r) => r !== null);
        // Unsealed copies (this one included) must be fewer than a quorum: then no write of epoch E
        // can be acknowledged any more, even by this node should it act on a stale placement.
        const enough = p.copies.length - sealed.length < node.quorumOf(p.copies.length);
        const target = sealed.find((r) => r.node === to);
        if (!enough || !target || target.commit !== tip['refs/heads/main']) primary = node.me;
      } catch (err) {
        node.logger.warn({ err: { message: (err as Error).message }, project }, 'cluster: a switchover failed; this primary keeps the project');
        primary = node.me;
      }
      if (!(await node.placements.commit(project, next, primary))) throw unavailable('The placement changed meanwhile (a failover took over).', project);
      if (primary === to) {
        await node.call(to, PROMOTE_PATH, { project, epoch: next }).catch((err: unknown) => {
          // The placement names it: its next write replicates under E+1 anyway; its copy state catches up at its next seal or promotion.
          node.logger.warn({ err: { message: (err as Error).message }, project, node: to }, 'cluster: the new primary could not be told; it writes by its placement');
        });
        await node.store.follow(project, async (r) => {
          writeCopyState(r.gitdir, { epoch: next, role: 'replica', tipEpoch: epoch }, r.durable);
        });
      } else {
        await node.promote(project, next);
      }
      node.announce(project);
      if (primary !== to) throw unavailable(`${to} could not take over; this node still writes the project (epoch ${next}).`, project);
      return { epoch: next, primary };
    }),
  );
}

/**
 * On the copy taking over, before a switchover: returns once it has indexed all it holds. A copy
 * fetched whole (a large project) indexes it in the background; the switchover's seal would wait
 * for that with the primary's writes held.
 */
export async function indexedCopy(node: ClusterNode, project: string): Promise<{ version: number }> {
  await node.store.reconcile(project);
  return { version: node.store.head(project)?.projectVersion ?? 0 };
}

/** On a node whose copy left the placement: its repository and index go (nothing reads them: requests run on the primary). */
export async function dropCopy(node: ClusterNode, project: string): Promise<{ dropped: boolean }> {
  const p = await node.placements.get(project);
  if (p && (p.copies.includes(node.me) || p.primary === node.me)) throw conflict('This node still holds a copy of the project in its placement.', project, 'STILL_A_COPY');
  node.markDropped(project);
  node.forget(project);
  if (!node.store.listProjects().includes(project)) return { dropped: false };
  await node.store.dropCopy(project);
  return { dropped: true };
}
