import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import { DomainError } from '../errors/domainError.ts';
import { redactUrlsIn } from '../logging/redact.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import type { Sync, SyncStateRecord } from './syncRecords.ts';
import type { SyncStore } from './syncStore.ts';

// What every kind of sync shares (the folder sync here, url and platform syncs in src/platform/).

/** Versions written by a sync carry actor type `sync` and the connection as actor. */
export function actorOfSync(c: ConnectionRecord): { type: 'sync'; id: string; author: string } {
  // Names made from a url sync's address (older ones kept it whole) must not record its secrets.
  return { type: 'sync', id: c.id, author: redactUrlsIn(`agent:${c.name}`) };
}

/** A paused sync moves nothing until it is resumed. */
export function assertActive(sync: Sync): void {
  if (sync.state.status === 'paused') throw new DomainError('CONFLICT', 'This sync is paused; resume it first.', { reason: 'paused' });
}

/**
 * The state of a sync whose connection was just made (two stores, no shared transaction): when
 * it cannot be stored, the connection is deleted again, so no key is left without its sync.
 */
export async function stateFor(
  deps: { store: Pick<SyncStore, 'create'>; connections: Pick<AccessConnectionStore, 'delete'> },
  input: Parameters<SyncStore['create']>[0],
): Promise<SyncStateRecord> {
  try {
    return await deps.store.create(input);
  } catch (err) {
    await deps.connections.delete(input.syncId);
    throw err;
  }
}
