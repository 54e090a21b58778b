import { sql } from 'kysely';
import { isUniqueViolation } from '../db/metadata/uniqueViolation.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import { oneOf } from '../db/metadata/oneOf.ts';
import type { PublishesTable } from '../db/metadata/tables/publishing.ts';
import { defined } from '../domain/defined.ts';
import { DomainError } from '../errors/domainError.ts';
import { newId, nowIso } from '../util/ids.ts';

/** A published node (migration 018). `version` null: always the latest version. */
export type PublishRecord = Omit<PublishesTable, 'enabled'> & { enabled: boolean };

type Row = PublishesTable;

const fromRow = (r: Row): PublishRecord => ({ ...r, enabled: r.enabled === 1 });
const toRow = (p: PublishRecord): Row => ({ ...p, enabled: p.enabled ? 1 : 0 });

export type PublishChanges = Partial<Pick<PublishRecord, 'enabled' | 'expires_at' | 'version' | 'slug'>>;

const slugTaken = (slug: string) => new DomainError('CONFLICT', `The slug "${slug}" is already in use; choose another.`, { field: 'slug', slug });

/** The `publishes` records, on the metadata store. Authorization is the caller's business (Publishes). */
export class PublishStore {
  /** Counts this store's writes, so that what is cached from it (PublicResolver) can tell it is stale. */
  revision = 0;
  private readonly listeners = new Set<(projectId: string) => void>();

  constructor(private readonly metadata: MetadataStore) {}

  /**
   * Calls `listener(projectId)` after each publish of the project is created, changed or
   * deleted here (publish/service.ts signals it to the other processes, whose caches of this table
   * know nothing of it). Returns the unsubscribe function.
   */
  onChanged(listener: (projectId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async find(id: string): Promise<PublishRecord | null> {
    return this.findBy('id', id);
  }

  /** The records of these ids that exist, in no particular order. */
  async findMany(ids: readonly string[]): Promise<PublishRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.metadata.db.selectFrom('publishes').selectAll().where(oneOf(this.metadata.engine, sql.ref('id'), ids)).execute();
    return rows.map(fromRow);
  }

  /** The publish a public address names: its key, or else its slug. */
  async findByAddress(keyOrSlug: string): Promise<PublishRecord | null> {
    return (await this.findBy('publish_key', keyOrSlug)) ?? (await this.findBy('slug', keyOrSlug));
  }

  async listByProject(projectId: string): Promise<PublishRecord[]> {
    const rows = await this.metadata.db.selectFrom('publishes').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  /** 409 when the slug is taken (checked first, and by the unique index for a race). */
  async create(input: Omit<PublishRecord, 'id' | 'created_at' | 'updated_at'>): Promise<PublishRecord> {
    if (input.slug !== null && (await this.findBy('slug', input.slug))) throw slugTaken(input.slug);
    const now = nowIso();
    const record: PublishRecord = { id: newId('pub'), ...input, created_at: now, updated_at: now };
    await this.unique(record.slug, this.metadata.db.insertInto('publishes').values(toRow(record)).execute());
    this.changed(record.project_id);
    return record;
  }

  /** Undefined fields stay; `expires_at`, `version` and `slug` null clear them. */
  async update(current: PublishRecord, changes: PublishChanges): Promise<PublishRecord> {
    const next: PublishRecord = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)), updated_at: nowIso() };
    if (next.slug !== null && next.slug !== current.slug) {
      const other = await this.findBy('slug', next.slug);
      if (other && other.id !== current.id) throw slugTaken(next.slug);
    }
    // Only the columns this change names: two updates at once of different fields both stay.
    const set = { ...defined({ slug: changes.slug, version: changes.version, expires_at: changes.expires_at }), ...(changes.enabled === undefined ? {} : { enabled: changes.enabled ? 1 : 0 }), updated_at: next.updated_at };
    const row = await this.unique(next.slug, this.metadata.db.updateTable('publishes').set(set).where('id', '=', next.id).returningAll().executeTakeFirst());
    this.changed(next.project_id);
    return row ? fromRow(row) : next;
  }

  async delete(record: PublishRecord): Promise<void> {
    await this.metadata.db.deleteFrom('publishes').where('id', '=', record.id).execute();
    this.changed(record.project_id);
  }

  private async findBy(column: 'id' | 'publish_key' | 'slug', value: string): Promise<PublishRecord | null> {
    const r = await this.metadata.db.selectFrom('publishes').selectAll().where(column, '=', value).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  private changed(projectId: string): void {
    this.revision++;
    for (const listener of this.listeners) listener(projectId);
  }

  private async unique<T>(slug: string | null, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (err) {
      if (slug !== null && isUniqueViolation(err, 'slug')) throw slugTaken(slug);
      throw err;
    }
  }
}
