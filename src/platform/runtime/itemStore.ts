import type { Selectable } from 'kysely';
import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { oneOf } from '../../db/metadata/oneOf.ts';
import type { SyncItemsTable } from '../../db/metadata/tables/syncs.ts';
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

type Row = Selectable<SyncItemsTable>;

/** Rows per INSERT: 8 parameters each, under both engines' limits on parameters per statement. */
const ROWS_PER_INSERT = 500;

/** The item map of syncs (table sync_items, on the metadata store): source item → node. */
export class ItemStore {
  constructor(private readonly metadata: MetadataStore) {}

  async load(syncId: string): Promise<Map<string, ItemRow>> {
    const rows = await this.metadata.db.selectFrom('sync_items').selectAll().where('sync_id', '=', syncId).execute();
    return new Map(rows.map((r) => [r.source_id, fromRow(r)]));
  }

  /** Writes (inserts or replaces) items of one sync, in one transaction. */
  async put(syncId: string, items: Iterable<ItemRow>): Promise<void> {
    const list = [...items];
    if (list.length === 0) return;
    await this.metadata.transaction((trx) => putItems(trx, syncId, list));
  }

  async remove(syncId: string, sourceIds: Iterable<string>): Promise<void> {
    await removeItems(this.metadata.engine, this.metadata.db, syncId, [...sourceIds]);
  }

  async forget(syncId: string): Promise<void> {
    await this.metadata.db.deleteFrom('sync_items').where('sync_id', '=', syncId).execute();
  }

  async count(syncId: string): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('sync_items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('sync_id', '=', syncId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}

/** Inserts or replaces rows (the last of a source id counts: one statement may not touch a row twice on PostgreSQL). */
export async function putItems(db: MetadataDb, syncId: string, items: Iterable<ItemRow>): Promise<void> {
  const bySource = new Map<string, ItemRow>();
  for (const i of items) bySource.set(i.sourceId, i);
  const values = [...bySource.values()].map((i) => ({
    sync_id: syncId,
    source_id: i.sourceId,
    node_id: i.nodeId,
    node_path: i.nodePath,
    path: i.path,
    source_version: i.sourceVersion,
    content_hash: i.contentHash,
    meta: JSON.stringify(i.meta),
  }));
  for (let at = 0; at < values.length; at += ROWS_PER_INSERT) {
    await db
      .insertInto('sync_items')
      .values(values.slice(at, at + ROWS_PER_INSERT))
      .onConflict((oc) =>
        oc.columns(['sync_id', 'source_id']).doUpdateSet((eb) => ({
          node_id: eb.ref('excluded.node_id'),
          node_path: eb.ref('excluded.node_path'),
          path: eb.ref('excluded.path'),
          source_version: eb.ref('excluded.source_version'),
          content_hash: eb.ref('excluded.content_hash'),
          meta: eb.ref('excluded.meta'),
        })),
      )
      .execute();
  }
}

export async function removeItems(engine: MetadataStore['engine'], db: MetadataDb, syncId: string, sourceIds: readonly string[]): Promise<void> {
  if (sourceIds.length === 0) return;
  await db
    .deleteFrom('sync_items')
    .where('sync_id', '=', syncId)
    .where((eb) => oneOf(engine, eb.ref('source_id'), sourceIds))
    .execute();
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
