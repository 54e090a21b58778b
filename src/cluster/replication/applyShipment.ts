import { PackBuilder } from '../../content/git/packWriter.ts';
import { readRef, RefUpdate } from '../../content/git/refs.ts';
import type { Repo } from '../../content/git/repo.ts';
import { readCopyState, writeCopyState } from './copyState.ts';
import type { Shipment } from './shipment.ts';

export type ApplyOutcome =
  | { ok: true }
  /** The copy was sealed at or accepted a later epoch: the sender is no longer the primary. */
  | { ok: false; reason: 'stale-epoch'; epoch: number }
  /** A ref is not where the sender expected: the copy is behind or diverged, and catches up by fetch. */
  | { ok: false; reason: 'moved'; tips: Record<string, string | null> }
  /** A ref's new tip is neither shipped nor already here. */
  | { ok: false; reason: 'incomplete'; missing: string };

/**
 * A replica takes one shipment (docs/design/cluster.md §5): the epoch fence first (a shipment of an
 * older epoch is refused; a newer one is remembered), then every ref must still be where the sender
 * expects, then the objects go in as one pack this process hashes and indexes itself, and the refs
 * move by compare-and-swap, the notes before `main` so that a reader who sees a commit finds its
 * note. The caller holds the copy's project lock, so seals and catch-ups do not interleave.
 */
export async function applyShipment(repo: Repo, s: Shipment): Promise<ApplyOutcome> {
  repo.ensure();
  const state = readCopyState(repo.gitdir);
  if (s.epoch < state.epoch) return { ok: false, reason: 'stale-epoch', epoch: state.epoch };
  const tips: Record<string, string | null> = {};
  for (const r of s.refs) tips[r.name] = readRef(repo.gitdir, r.name);
  if (s.refs.some((r) => tips[r.name] !== r.old)) return { ok: false, reason: 'moved', tips };
  if (s.objects.length > 0) {
    const pack = new PackBuilder();
    for (const o of s.objects) pack.add(o.type, o.content);
    repo.writePack(pack);
    repo.syncObjectDirs();
  }
  for (const r of s.refs) {
    try {
      await repo.readObject(r.next);
    } catch {
      return { ok: false, reason: 'incomplete', missing: r.next };
    }
  }
  if (s.epoch !== state.epoch || s.epoch !== state.tipEpoch || state.role !== 'replica') writeCopyState(repo.gitdir, { epoch: s.epoch, role: 'replica', tipEpoch: s.epoch }, repo.durable);
  const ordered = [...s.refs].sort((a, b) => (a.name === 'refs/heads/main' ? 1 : 0) - (b.name === 'refs/heads/main' ? 1 : 0));
  for (const r of ordered) {
    const update = RefUpdate.prepare(repo.gitdir, r.name, r.old, r.next, repo.durable);
    if (typeof update === 'string') return { ok: false, reason: 'moved', tips: Object.fromEntries(s.refs.map((m) => [m.name, readRef(repo.gitdir, m.name)])) };
    update.publish();
  }
  return { ok: true };
}
