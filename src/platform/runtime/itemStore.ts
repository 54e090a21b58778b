import type { Db } from '../../db/database.ts';
import type { KnownItem, KnownItems } from './connector.ts';

/** One source item as the sync holds it: which node it fills, and the versions last seen on both sides. */
export interface ItemRow {
  sourceId: string;
  /** Null only between a page's commit and the look-up of the nodes it created (nodePath finds them). */
  nodeId: string | null;
  /** The project path the node was given. */
  nodePath: string;
  /** The path under the sync's folder as the source names it. */
  path: string;
  sourceVersion: string;
  /** The node's content hash when the sync last wrote or pushed it. */
  contentHash: string | null;
  meta: Record<string, unknown>;
}

interface Row {
  source_id: string;
  node_id: string | null;
  node_path: string;
  path: string;
  source_version: string;
  content_hash: string | null;
  meta: string;
}

/** The item map of syncs (table sync_items): source item → node. */
export class ItemStore {
  constructor(private readonly db: Db) {}

  load(syncId: string): Map<string, ItemRow> {
    const rows = this.db.prepare('SELECT * FROM sync_items WHERE sync_id = ?').all(syncId) as Row[];
    return new Map(rows.map((r) => [r.source_id, fromRow(r)]));
  }

  /** Writes (inserts or replaces) items of one sync. Call inside a transaction for many. */
  put(syncId: string, items: Iterable<ItemRow>): void {
    const stmt = this.db.prepare(
      `INSERT INTO sync_items (sync_id, source_id, node_id, node_path, path, source_version, content_hash, meta)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (sync_id, source_id) DO UPDATE SET node_id = excluded.node_id, node_path = excluded.node_path, path = excluded.path,
         source_version = excluded.source_version, content_hash = excluded.content_hash, meta = excluded.meta`,
    );
    for (const i of items) stmt.run(syncId, i.sourceId, i.nodeId, i.nodePath, i.path, i.sourceVersion, i.contentHash, JSON.stringify(i.meta));
  }

  remove(syncId: string, sourceIds: Iterable<string>): void {
    const stmt = this.db.prepare('DELETE FROM sync_items WHERE sync_id = ? AND source_id = ?');
    for (const id of sourceIds) stmt.run(syncId, id);
  }

  forget(syncId: string): void {
    this.db.prepare('DELETE FROM sync_items WHERE sync_id = ?').run(syncId);
  }

  count(syncId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM sync_items WHERE sync_id = ?').get(syncId) as { n: number }).n;
  }
}

function fromRow(r: Row): ItemRow {
  let meta: Record<string, unknown> = {};
  try {
    meta = JSON.parse(r.meta) as Record<string, unknown>;
  } catch {
    /* a broken meta is an empty one: the connector refetches what it needs */
  }
  return { sourceId: r.source_id, nodeId: r.node_id, nodePath: r.node_path, path: r.path, sourceVersion: r.source_version, contentHash: r.content_hash, meta };
}

/** The run's item map as connectors see it (KnownItems), kept current as pages are applied. */
export class KnownItemMap implements KnownItems {
  constructor(readonly rows: Map<string, ItemRow>) {}

  get(sourceId: string): KnownItem | undefined {
    const r = this.rows.get(sourceId);
    return r ? known(r) : undefined;
  }

  *all(): Iterable<KnownItem> {
    for (const r of this.rows.values()) yield known(r);
  }

  get size(): number {
    return this.rows.size;
  }
}

function known(r: ItemRow): KnownItem {
  return { sourceId: r.sourceId, path: r.path, sourceVersion: r.sourceVersion, meta: r.meta };
}
