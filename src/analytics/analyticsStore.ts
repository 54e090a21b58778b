import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.ts';

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
type Where = { sql: string; args: Record<string, string | number> };

/**
 * All analytics SQL (migration 018): adding batches of aggregates, and reading them back by
 * bucket or ranked by publish, connection or node. Rows of projects that no longer exist are
 * skipped when added (a project deleted between a request and the flush).
 */
export class AnalyticsStore {
  private readonly s: Record<'addCount' | 'addVisitor', Statement>;

  constructor(private readonly db: Db) {
    this.s = {
      addCount: db.prepare(`INSERT INTO access_counts (project_id, minute, publish_id, connection_id, node_id, views, api_calls)
        SELECT @projectId, @minute, @publishId, @connectionId, @nodeId, @views, @apiCalls WHERE EXISTS (SELECT 1 FROM projects WHERE id = @projectId)
        ON CONFLICT (project_id, minute, publish_id, connection_id, node_id)
        DO UPDATE SET views = views + excluded.views, api_calls = api_calls + excluded.api_calls`),
      addVisitor: db.prepare(`INSERT OR IGNORE INTO access_visitors (project_id, minute, publish_id, node_id, visitor)
        SELECT @projectId, @minute, @publishId, @nodeId, @visitor WHERE EXISTS (SELECT 1 FROM projects WHERE id = @projectId)`),
    };
  }

  /** Adds a batch in one transaction. */
  add(counts: Iterable<CountRow>, visitors: Iterable<VisitorRow>): void {
    this.db.transaction(() => {
      for (const c of counts) this.s.addCount.run(c);
      for (const v of visitors) this.s.addVisitor.run(v);
    })();
  }

  /**
   * Counts per bucket of `size` minutes (buckets aligned to multiples of size); buckets with nothing
   * are absent. The size is cast: a bound JS number may arrive as REAL, and the division must be whole.
   */
  buckets(f: CountFilter, size: number): BucketCounts[] {
    const counts = this.where(f, true);
    const rows = this.db
      .prepare(`SELECT (minute / CAST(@size AS INTEGER)) * CAST(@size AS INTEGER) AS bucket, SUM(views) AS views, SUM(api_calls) AS apiCalls FROM access_counts WHERE ${counts.sql} GROUP BY bucket`)
      .all({ ...counts.args, size }) as { bucket: number; views: number; apiCalls: number }[];
    const byBucket = new Map(rows.map((r) => [r.bucket, { ...r, visitors: 0 }]));
    const visitors = this.where(f, false);
    if (visitors) {
      const vs = this.db
        .prepare(`SELECT (minute / CAST(@size AS INTEGER)) * CAST(@size AS INTEGER) AS bucket, COUNT(DISTINCT visitor) AS visitors FROM access_visitors WHERE ${visitors.sql} GROUP BY bucket`)
        .all({ ...visitors.args, size }) as { bucket: number; visitors: number }[];
      for (const v of vs) {
        const b = byBucket.get(v.bucket) ?? { bucket: v.bucket, views: 0, apiCalls: 0, visitors: 0 };
        b.visitors = v.visitors;
        byBucket.set(v.bucket, b);
      }
    }
    return [...byBucket.values()].sort((a, b) => a.bucket - b.bucket);
  }

  /** Totals of the range (visitors: distinct hashes, so one visitor counts once per day, see VisitorHasher). */
  totals(f: CountFilter): { views: number; apiCalls: number; visitors: number } {
    const w = this.where(f, true);
    const t = this.db.prepare(`SELECT COALESCE(SUM(views), 0) AS views, COALESCE(SUM(api_calls), 0) AS apiCalls FROM access_counts WHERE ${w.sql}`).get(w.args) as {
      views: number;
      apiCalls: number;
    };
    const v = this.where(f, false);
    const visitors = v ? (this.db.prepare(`SELECT COUNT(DISTINCT visitor) AS n FROM access_visitors WHERE ${v.sql}`).get(v.args) as { n: number }).n : 0;
    return { ...t, visitors };
  }

  /** The `limit` publishes, connections or nodes with the most accesses (views plus API calls) in the range. */
  top(f: CountFilter, by: Dimension, limit: number): Ranked[] {
    const w = this.where(f, true);
    const rows = this.db
      .prepare(
        `SELECT ${by} AS id, SUM(views) AS views, SUM(api_calls) AS apiCalls FROM access_counts WHERE ${w.sql} AND ${by} <> ''
         GROUP BY ${by} ORDER BY SUM(views) + SUM(api_calls) DESC, ${by} LIMIT @limit`,
      )
      .all({ ...w.args, limit }) as Omit<Ranked, 'visitors'>[];
    if (by === 'connection_id' || rows.length === 0) return rows.map((r) => ({ ...r, visitors: 0 }));
    const v = this.where(f, false);
    if (!v) return rows.map((r) => ({ ...r, visitors: 0 }));
    const count = this.db.prepare(`SELECT COUNT(DISTINCT visitor) AS n FROM access_visitors WHERE ${v.sql} AND ${by} = @id`);
    return rows.map((r) => ({ ...r, visitors: (count.get({ ...v.args, id: r.id }) as { n: number }).n }));
  }

  /** The nodes with accesses in the range (the filter's other conditions applied). */
  nodes(f: CountFilter): string[] {
    const w = this.where(f, true);
    return (this.db.prepare(`SELECT DISTINCT node_id AS id FROM access_counts WHERE ${w.sql} AND node_id <> ''`).all(w.args) as { id: string }[]).map((r) => r.id);
  }

  /**
   * The WHERE clause of a filter. Visitors are public viewers: they have no connection, so a
   * filter on a connection has none (null).
   */
  private where(f: CountFilter, counts: true): Where;
  private where(f: CountFilter, counts: false): Where | null;
  private where(f: CountFilter, counts: boolean): Where | null {
    if (!counts && f.connectionId !== undefined) return null;
    const args: Where['args'] = { projectId: f.projectId, from: f.fromMinute, to: f.toMinute };
    const parts = ['project_id = @projectId', 'minute >= @from', 'minute < @to'];
    const add = (column: string, name: string, value: string | undefined) => {
      if (value === undefined) return;
      parts.push(`${column} = @${name}`);
      args[name] = value;
    };
    add('publish_id', 'publishId', f.publishId);
    add('node_id', 'nodeId', f.nodeId);
    add('connection_id', 'connectionId', f.connectionId);
    if (f.nodeIds !== undefined) {
      parts.push('node_id IN (SELECT value FROM json_each(@nodeIds))');
      args.nodeIds = JSON.stringify(f.nodeIds);
    }
    return { sql: parts.join(' AND '), args };
  }
}
