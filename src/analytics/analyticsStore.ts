import { sql, type SelectQueryBuilder } from 'kysely';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import { oneOf } from '../db/metadata/oneOf.ts';
import type { MetadataSchema } from '../db/metadata/schema.ts';

/** One aggregate row to add: the counts of a project, minute, publish, connection and node ('' = none). */
export interface CountRow {
  projectId: string;
  minute: number;
  publishId: string;
  connectionId: string;
  nodeId: string;
  views: number;
  apiCalls: number;
}

/** A distinct public visitor (its salted hash) of a publish and node in a minute. */
export interface VisitorRow {
  projectId: string;
  minute: number;
  publishId: string;
  nodeId: string;
  visitor: string;
}

/** What a query counts: a project's minutes in [fromMinute, toMinute), optionally one publish, connection or node. */
export interface CountFilter {
  projectId: string;
  fromMinute: number;
  toMinute: number;
  publishId?: string;
  connectionId?: string;
  nodeId?: string;
  /** Only the accesses of these nodes (what a scoped caller may read); accesses naming no node are left out. */
  nodeIds?: readonly string[];
}

export interface BucketCounts {
  bucket: number;
  views: number;
  apiCalls: number;
  visitors: number;
}

export interface Ranked {
  id: string;
  views: number;
  apiCalls: number;
  visitors: number;
}

type Dimension = 'publish_id' | 'connection_id' | 'node_id';
type Db = MetadataStore['db'];
type CountsQuery = SelectQueryBuilder<MetadataSchema, 'access_counts', object>;
type VisitorsQuery = SelectQueryBuilder<MetadataSchema, 'access_visitors', object>;

/** Rows per INSERT: a few thousand parameters, under either engine's limit. */
const ROWS_PER_INSERT = 400;

/**
 * All analytics queries (migration 018), on the metadata store: adding batches of aggregates, and
 * reading them back by bucket or ranked by publish, connection or node. Rows of projects that no
 * longer exist are skipped when added (a project deleted between a request and the flush). Sums
 * and counts are read through Number(): PostgreSQL answers them as 64-bit integers, in text.
 */
export class AnalyticsStore {
  constructor(private readonly metadata: MetadataStore) {}

  /** Adds a batch in one transaction; rows with the same key are summed first (one row per key per statement). */
  async add(counts: Iterable<CountRow>, visitors: Iterable<VisitorRow>): Promise<void> {
    const summed = new Map<string, CountRow>();
    for (const c of counts) {
      const key = `${c.projectId}\0${c.minute}\0${c.publishId}\0${c.connectionId}\0${c.nodeId}`;
      const kept = summed.get(key);
      if (kept) (kept.views += c.views), (kept.apiCalls += c.apiCalls);
      else summed.set(key, { ...c });
    }
    const seen = [...visitors];
    if (summed.size === 0 && seen.length === 0) return;
    await this.metadata.transaction(async (trx) => {
      const ids = [...new Set([...[...summed.values()].map((c) => c.projectId), ...seen.map((v) => v.projectId)])];
      const existing = new Set((await trx.selectFrom('projects').select('id').where(oneOf(this.metadata.engine, sql.ref('id'), ids)).execute()).map((r) => r.id));
      const rows = [...summed.values()].filter((c) => existing.has(c.projectId));
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
        await trx
          .insertInto('access_counts')
          .values(rows.slice(i, i + ROWS_PER_INSERT).map((c) => ({ project_id: c.projectId, minute: c.minute, publish_id: c.publishId, connection_id: c.connectionId, node_id: c.nodeId, views: c.views, api_calls: c.apiCalls })))
          .onConflict((oc) =>
            oc.columns(['project_id', 'minute', 'publish_id', 'connection_id', 'node_id']).doUpdateSet((eb) => ({
              views: eb('access_counts.views', '+', eb.ref('excluded.views')),
              api_calls: eb('access_counts.api_calls', '+', eb.ref('excluded.api_calls')),
            })),
          )
          .execute();
      }
      const kept = seen.filter((v) => existing.has(v.projectId));
      for (let i = 0; i < kept.length; i += ROWS_PER_INSERT) {
        await trx
          .insertInto('access_visitors')
          .values(kept.slice(i, i + ROWS_PER_INSERT).map((v) => ({ project_id: v.projectId, minute: v.minute, publish_id: v.publishId, node_id: v.nodeId, visitor: v.visitor })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
    });
  }

  /**
   * Counts per bucket of `size` minutes (buckets aligned to multiples of size); buckets with nothing
   * are absent. The size is cast: a bound JS number may arrive as REAL, and the division must be whole.
   */
  async buckets(f: CountFilter, size: number): Promise<BucketCounts[]> {
    // Grouped by its alias: spelled out again, PostgreSQL would see other parameters, another expression.
    const bucket = sql<number>`(minute / CAST(${size} AS INTEGER)) * CAST(${size} AS INTEGER)`;
    const rows = await this.counts(f)
      .select([bucket.as('bucket'), (eb) => eb.fn.sum<number>('views').as('views'), (eb) => eb.fn.sum<number>('api_calls').as('apiCalls')])
      .groupBy(sql`bucket`)
      .execute();
    const byBucket = new Map(rows.map((r) => [Number(r.bucket), { bucket: Number(r.bucket), views: Number(r.views), apiCalls: Number(r.apiCalls), visitors: 0 }]));
    const visitors = this.visitors(f);
    if (visitors) {
      const vs = await visitors.select([bucket.as('bucket'), (eb) => eb.fn.count<number>('visitor').distinct().as('visitors')]).groupBy(sql`bucket`).execute();
      for (const v of vs) {
        const b = byBucket.get(Number(v.bucket)) ?? { bucket: Number(v.bucket), views: 0, apiCalls: 0, visitors: 0 };
        b.visitors = Number(v.visitors);
        byBucket.set(b.bucket, b);
      }
    }
    return [...byBucket.values()].sort((a, b) => a.bucket - b.bucket);
  }

  /** Totals of the range (visitors: distinct hashes, so one visitor counts once per day, see VisitorHasher). */
  async totals(f: CountFilter): Promise<{ views: number; apiCalls: number; visitors: number }> {
    const t = await this.counts(f)
      .select([(eb) => eb.fn.coalesce(eb.fn.sum<number>('views'), sql<number>`0`).as('views'), (eb) => eb.fn.coalesce(eb.fn.sum<number>('api_calls'), sql<number>`0`).as('apiCalls')])
      .executeTakeFirstOrThrow();
    const v = this.visitors(f);
    const visitors = v ? Number((await v.select((eb) => eb.fn.count<number>('visitor').distinct().as('n')).executeTakeFirstOrThrow()).n) : 0;
    return { views: Number(t.views), apiCalls: Number(t.apiCalls), visitors };
  }

  /** The `limit` publishes, connections or nodes with the most accesses (views plus API calls) in the range. */
  async top(f: CountFilter, by: Dimension, limit: number): Promise<Ranked[]> {
    const rows = (
      await this.counts(f)
        .where(by, '<>', '')
        .select([sql.ref<string>(by).as('id'), (eb) => eb.fn.sum<number>('views').as('views'), (eb) => eb.fn.sum<number>('api_calls').as('apiCalls')])
        .groupBy(by)
        .orderBy(sql`SUM(views) + SUM(api_calls)`, 'desc')
        .orderBy(by)
        .limit(limit)
        .execute()
    ).map((r) => ({ id: r.id, views: Number(r.views), apiCalls: Number(r.apiCalls), visitors: 0 }));
    if (by === 'connection_id' || rows.length === 0) return rows;
    const v = this.visitors(f);
    if (!v) return rows;
    for (const r of rows) {
      const n = await v.where(by, '=', r.id).select((eb) => eb.fn.count<number>('visitor').distinct().as('n')).executeTakeFirstOrThrow();
      r.visitors = Number(n.n);
    }
    return rows;
  }

  /** The nodes with accesses in the range (the filter's other conditions applied). */
  async nodes(f: CountFilter): Promise<string[]> {
    return (await this.counts(f).where('node_id', '<>', '').select('node_id').distinct().execute()).map((r) => r.node_id);
  }

  /** The counts of a filter. */
  private counts(f: CountFilter): CountsQuery {
    let q = this.db().selectFrom('access_counts').where('project_id', '=', f.projectId).where('minute', '>=', f.fromMinute).where('minute', '<', f.toMinute);
    if (f.publishId !== undefined) q = q.where('publish_id', '=', f.publishId);
    if (f.nodeId !== undefined) q = q.where('node_id', '=', f.nodeId);
    if (f.connectionId !== undefined) q = q.where('connection_id', '=', f.connectionId);
    if (f.nodeIds !== undefined) q = q.where(oneOf(this.metadata.engine, sql.ref('node_id'), f.nodeIds));
    return q;
  }

  /** The visitors of a filter. Visitors are public viewers: they have no connection, so a filter on a connection has none (null). */
  private visitors(f: CountFilter): VisitorsQuery | null {
    if (f.connectionId !== undefined) return null;
    let q = this.db().selectFrom('access_visitors').where('project_id', '=', f.projectId).where('minute', '>=', f.fromMinute).where('minute', '<', f.toMinute);
    if (f.publishId !== undefined) q = q.where('publish_id', '=', f.publishId);
    if (f.nodeId !== undefined) q = q.where('node_id', '=', f.nodeId);
    if (f.nodeIds !== undefined) q = q.where(oneOf(this.metadata.engine, sql.ref('node_id'), f.nodeIds));
    return q;
  }

  private db(): Db {
    return this.metadata.db;
  }
}
