import type { Selectable } from 'kysely';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { NodeUploadsTable } from '../../db/metadata/tables/ingest.ts';
import { nowIso } from '../../util/ids.ts';

/** One issued upload address (a row of node_uploads, migrations 008 and 029). */
export type UploadGrantRow = Selectable<NodeUploadsTable>;

/**
 * The grants behind upload addresses, on the metadata store. The signed address carries only the
 * grant's id: what it allows, and who asked, is read here at PUT time. Who asked
 * (`principal_kind`, `principal_id`) is resolved to the principal as it is now by
 * `Authenticator.current`. A PUT claims the row before it commits (`claim`: one winner), and
 * deletes it once committed (`finish`); a claim that ends without a commit is released. So no
 * address writes twice, whichever process serves its PUTs.
 */
export class UploadGrants {
  constructor(private readonly metadata: MetadataStore) {}

  async issue(row: Omit<UploadGrantRow, 'claimed_at'>): Promise<void> {
    // Expired grants can never be used: drop them whenever a new one is issued.
    await this.metadata.db.deleteFrom('node_uploads').where('expires_at', '<', nowIso()).execute();
    await this.metadata.db.insertInto('node_uploads').values({ ...row, claimed_at: null }).execute();
  }

  async find(id: string): Promise<UploadGrantRow | null> {
    return (await this.metadata.db.selectFrom('node_uploads').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  /** Claims the grant for one PUT (a compare-and-set on an unclaimed row): the claim's time, or null when another PUT holds it (or it is gone). */
  async claim(id: string, at = nowIso()): Promise<string | null> {
    const r = await this.metadata.db.updateTable('node_uploads').set({ claimed_at: at }).where('id', '=', id).where('claimed_at', 'is', null).executeTakeFirst();
    return r.numUpdatedRows === 1n ? at : null;
  }

  /** Keeps a claim fresh while its PUT streams; false when it is no longer this claim. */
  async renew(id: string, claimedAt: string, at = nowIso()): Promise<string | null> {
    const r = await this.metadata.db.updateTable('node_uploads').set({ claimed_at: at }).where('id', '=', id).where('claimed_at', '=', claimedAt).executeTakeFirst();
    return r.numUpdatedRows === 1n ? at : null;
  }

  /** Gives up the claim `claimedAt` (nothing was written): the address may be used again. */
  async release(id: string, claimedAt: string): Promise<boolean> {
    const r = await this.metadata.db.updateTable('node_uploads').set({ claimed_at: null }).where('id', '=', id).where('claimed_at', '=', claimedAt).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** The grant is used up (its content is committed). */
  async finish(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('node_uploads').where('id', '=', id).execute();
  }
}
