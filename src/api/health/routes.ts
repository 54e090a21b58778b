import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { sql } from 'kysely';
import { serviceVersion } from '../../config/version.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { Ownership } from '../../cluster/ownership.ts';

function workersOf(o: Pick<Ownership, 'alone' | 'workerName' | 'members'>) {
  if (o.alone || !o.members) return {};
  return { worker: o.workerName, workers: o.members().map((m) => ({ name: m.name, pid: m.pid, started_at: m.startedAt, restarts: m.restarts, projects: m.projects })) };
}

const workerSchema = z.object({
  name: z.string(),
  pid: z.number().int(),
  started_at: z.string(),
  restarts: z.number().int(),
  /** Projects whose lease the worker holds: their changes run there. Leases move only when a worker stops or dies. */
  projects: z.number().int(),
});
export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  /** Every database the service needs answers: cns.db in the data folder and, on PostgreSQL, the metadata database. */
  database: z.boolean(),
  /** Where the metadata records are (CNS_DATABASE_URL): `sqlite` (cns.db) or `postgres`. */
  metadata_engine: z.enum(['sqlite', 'postgres']),
  /** A node of a cluster: its id (CNS_NODE_ID), which a node checks through its own CNS_NODE_URL; null outside a cluster. */
  node: z.string().nullable(),
  /** Several workers (`cns serve --workers N`): the worker that answered, and every live worker. */
  worker: z.string().optional(),
  workers: z.array(workerSchema).optional(),
});

/** GET /healthz: outside the base path and unauthenticated, for load balancers and orchestrators. */
/** A probe must answer even when the metadata database hangs: past this, it counts as unreachable. */
const PROBE_MS = 2000;

/** PostgreSQL answers a trivial query in time (a new connection when the pool has none: the probe also shows recovery). */
async function metadataAnswers(metadata: MetadataStore): Promise<boolean> {
  if (metadata.engine === 'sqlite') return true; // cns.db, probed with the content index
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_MS)));
  const probe = sql<{ ok: number }>`SELECT 1 AS ok`.execute(metadata.db).then(
    (r) => r.rows.length === 1,
    () => false,
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(s: { db: Db; metadata: MetadataStore; ownership: Pick<Ownership, 'alone' | 'workerName' | 'members'>; settings: { cluster: { nodeId: string } | null } }): RouteGroup {
  return {
    prefix: '',
    server: '/',
    tag: 'Health',
    routes: [
      route({
        method: 'get',
        path: '/healthz',
        summary: 'Liveness and database reachability (503 when the database is unreachable)',
        authorize: { public: 'load balancers and orchestrators probe it without a credential' },
        response: healthSchema,
        async handle(ctx) {
          let database = false;
          try {
            database = s.db.prepare('SELECT 1 AS ok').get() !== undefined;
          } catch {
            database = false;
          }
          database = database && (await metadataAnswers(s.metadata));
          ctx.status = database ? 200 : 503;
          if (!database) ctx.set('Retry-After', '2');
          ctx.body = {
            success: database,
            code: database ? 0 : 'DATABASE_UNAVAILABLE',
            data: { status: database ? 'ok' : 'degraded', version: serviceVersion, database, metadata_engine: s.metadata.engine, node: s.settings.cluster?.nodeId ?? null, ...workersOf(s.ownership) },
            message: database ? 'OK' : 'Database unreachable',
          };
        },
      }),
    ],
  };
}
