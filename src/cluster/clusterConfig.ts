import type { MetadataDb } from '../db/metadata/metadataStore.ts';

/**
 * Settles the cluster's own settings: each key is written by the first node that brings it
 * (insert-if-absent, so nodes starting together agree on one value) and read back. Answers the
 * stored values, for the caller to compare with its own.
 */
export async function settleClusterConfig(db: MetadataDb, mine: Record<string, string>): Promise<Record<string, string>> {
  const entries = Object.entries(mine);
  if (entries.length === 0) return {};
  await db
    .insertInto('cluster_config')
    .values(entries.map(([key, value]) => ({ key, value })))
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const rows = await db.selectFrom('cluster_config').select(['key', 'value']).where('key', 'in', entries.map(([k]) => k)).execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}
