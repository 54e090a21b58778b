import { DiscardPolicy, JetStreamApiError, type JetStreamManager, RetentionPolicy, StorageType, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { nanos, type ServerInfo } from '@nats-io/transport-node';
import { BUS_SUBJECTS } from './subjects.ts';

/**
 * The bus's one stream: every commit and signal of the cluster, kept 7 days (what a node that was
 * away reads to learn what changed), on file, replicated on up to 3 servers, with a 2-minute
 * window in which a repeated message id is dropped.
 */
export const DEFAULT_STREAM = 'CNS_EVENTS';
const MAX_REPLICAS = 3;
const MAX_AGE_MS = 7 * 24 * 3600_000;
const DUPLICATE_WINDOW_MS = 2 * 60_000;

/** The stream exists in a form the bus cannot bring to its settings: asking again will not help. */
export class StreamConflictError extends Error {}

/** Errors of a placement the cluster cannot satisfy (fewer JetStream servers than replicas asked). */
const PLACEMENT_ERRORS = new Set([
  10005, // no suitable peers for placement
  10023, // insufficient resources
  10074, // replicas > 1 not supported in non-clustered mode
]);

/**
 * How many servers make up the cluster: the client URLs the server advertises (its own among
 * them) when it is clustered, else 1. NATS 2.9 tells a client nothing closer to the JetStream
 * meta group's size; a cluster with servers that do not run JetStream is caught by the
 * placement errors above, and the replicas asked for are lowered.
 */
export function clusterSizeOf(info: ServerInfo | undefined): number {
  if (!info?.cluster) return 1;
  return Math.max(1, new Set(info.connect_urls ?? []).size);
}

export function busStreamConfig(name: string, replicas: number): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects: BUS_SUBJECTS,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
    max_age: nanos(MAX_AGE_MS),
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
  };
}

/**
 * Creates the stream, or brings an existing one to the settings above. Its replicas are never
 * lowered: a node that starts while a server is down sees a smaller cluster than the stream was
 * made for.
 */
export async function ensureBusStream(jsm: JetStreamManager, name: string, clusterSize: number): Promise<StreamInfo> {
  const wanted = Math.min(MAX_REPLICAS, clusterSize);
  const existing = await jsm.streams.info(name).catch((err: unknown) => {
    if (err instanceof JetStreamApiError && err.code === 10059) return null; // stream not found
    throw err;
  });
  if (!existing) return withFewerReplicasIfPlacementFails(wanted, 1, (r) => jsm.streams.add(busStreamConfig(name, r)));
  const have = existing.config.num_replicas;
  const target = busStreamConfig(name, Math.max(have, wanted));
  const c = existing.config;
  const same =
    c.num_replicas === target.num_replicas &&
    c.storage === target.storage &&
    c.max_age === target.max_age &&
    c.duplicate_window === target.duplicate_window &&
    c.subjects.length === BUS_SUBJECTS.length &&
    BUS_SUBJECTS.every((s) => c.subjects.includes(s));
  if (same) return existing;
  if (c.storage !== target.storage) throw new StreamConflictError(`the stream ${name} is kept in ${c.storage} storage; the bus needs file storage (delete the stream to let cns create it)`);
  const { name: _name, storage: _storage, ...update } = target;
  return withFewerReplicasIfPlacementFails(target.num_replicas!, have, (r) => jsm.streams.update(name, { ...update, num_replicas: r }));
}

async function withFewerReplicasIfPlacementFails(replicas: number, floor: number, apply: (replicas: number) => Promise<StreamInfo>): Promise<StreamInfo> {
  for (let r = replicas; ; r--) {
    try {
      return await apply(r);
    } catch (err) {
      if (r <= floor || !(err instanceof JetStreamApiError && PLACEMENT_ERRORS.has(err.code))) throw err;
    }
  }
}
