import type { ContentStore } from '../../content/contentStore.ts';
import { applyShipment, type ApplyOutcome } from './applyShipment.ts';
import { catchUp, type FetchSource } from './catchUp.ts';
import { readCopyState, writeCopyState } from './copyState.ts';
import { DeposedError, type Tips } from './replicator.ts';
import type { Shipment } from './shipment.ts';

/**
 * A node's side of replication for the projects it holds as a replica: shipments and catch-ups
 * from the primary, each applied with the project's writes held (ContentStore.follow), fenced by
 * the copy's epoch, and followed by the index.
 */
export class ReplicaService {
  constructor(
    private readonly content: ContentStore,
    /** Where to fetch a project from: its primary. */
    private readonly sourceOf: (project: string) => FetchSource | Promise<FetchSource>,
    /** Throws for a project whose copy left this node (a late shipment must not bring it back). */
    private readonly admit: (project: string) => Promise<void> = async () => {},
  ) {}

  async receive(shipment: Shipment): Promise<ApplyOutcome> {
    await this.admit(shipment.project);
    return this.content.follow(shipment.project, (repo) => applyShipment(repo, shipment));
  }

  /** Fetches the project from its primary at `epoch`; DeposedError when the copy knows a newer epoch. */
  async catchUp(project: string, epoch: number): Promise<Tips> {
    await this.admit(project);
    const source = await this.sourceOf(project);
    return this.content.follow(project, async (repo, gitBinary) => {
      repo.ensure();
      const state = readCopyState(repo.gitdir);
      if (epoch < state.epoch) throw new DeposedError(project, state.epoch);
      const tips = await catchUp(repo, gitBinary, source);
      writeCopyState(repo.gitdir, { epoch, role: 'replica', tipEpoch: epoch }, repo.durable);
      return tips;
    });
  }
}
