import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.ts';
import { DomainError } from '../errors/domainError.ts';
import { newId, nowIso } from '../util/ids.ts';

/** A published node (migration 018). `version` null: always the latest version. */
export interface PublishRecord {
  id: string;
  project_id: string;
  node_id: string;
  publish_key: string;
  slug: string | null;
  version: number | null;
  enabled: boolean;
  expires_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

type Row = Omit<PublishRecord, 'enabled'> & { enabled: number };

const fromRow = (r: Row): PublishRecord => ({ ...r, enabled: r.enabled === 1 });
const toRow = (p: PublishRecord): Row => ({ ...p, enabled: p.enabled ? 1 : 0 });

export type PublishChanges = Partial<Pick<PublishRecord, 'enabled' | 'expires_at' | 'version' | 'slug'>>;

const slugTaken = (slug: string) => new DomainError('CONFLICT', `The slug "${slug}" is already in use; choose another.`, { field: 'slug', slug });

/** The `publishes` records. Authorization is the caller's business (Publishes). */
export class PublishStore {
  private readonly s: Record<string, Statement>;
  /** Counts this store's writes, so that what is cached from it (PublicResolver) can tell it is stale. */
  revision = 0;

  constructor(db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      find: p('SELECT * FROM publishes WHERE id = ?'),
      byKey: p('SELECT * FROM publishes WHERE publish_key = ?'),
      bySlug: p('SELECT * FROM publishes WHERE slug = ?'),
      byProject: p('SELECT * FROM publishes WHERE project_id = ? ORDER BY created_at, id'),
      insert: p(`INSERT INTO publishes (id, project_id, node_id, publish_key, slug, version, enabled, expires_at, created_by, created_at, updated_at)
        VALUES (@id, @project_id, @node_id, @publish_key, @slug, @version, @enabled, @expires_at, @created_by, @created_at, @updated_at)`),
      update: p('UPDATE publishes SET slug = @slug, version = @version, enabled = @enabled, expires_at = @expires_at, updated_at = @updated_at WHERE id = @id'),
      remove: p('DELETE FROM publishes WHERE id = ?'),
    };
  }

  find(id: string): PublishRecord | null {
    const r = this.s.find.get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  /** The publish a public address names: its key, or else its slug. */
  findByAddress(keyOrSlug: string): PublishRecord | null {
    const r = (this.s.byKey.get(keyOrSlug) ?? this.s.bySlug.get(keyOrSlug)) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  listByProject(projectId: string): PublishRecord[] {
    return (this.s.byProject.all(projectId) as Row[]).map(fromRow);
  }

  /** 409 when the slug is taken (checked first, and by the unique index for a race). */
  create(input: Omit<PublishRecord, 'id' | 'created_at' | 'updated_at'>): PublishRecord {
    if (input.slug !== null && this.s.bySlug.get(input.slug)) throw slugTaken(input.slug);
    const now = nowIso();
    const record: PublishRecord = { id: newId('pub'), ...input, created_at: now, updated_at: now };
    this.unique(record.slug, () => this.s.insert.run(toRow(record)));
    this.revision++;
    return record;
  }

  /** Undefined fields stay; `expires_at`, `version` and `slug` null clear them. */
  update(current: PublishRecord, changes: PublishChanges): PublishRecord {
    const next: PublishRecord = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)), updated_at: nowIso() };
    if (next.slug !== null && next.slug !== current.slug) {
      const other = this.s.bySlug.get(next.slug) as Row | undefined;
      if (other && other.id !== current.id) throw slugTaken(next.slug);
    }
    this.unique(next.slug, () => this.s.update.run(toRow(next)));
    this.revision++;
    return next;
  }

  delete(id: string): void {
    this.s.remove.run(id);
    this.revision++;
  }

  private unique(slug: string | null, write: () => void): void {
    try {
      write();
    } catch (err) {
      if (slug !== null && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && String((err as Error).message).includes('slug')) throw slugTaken(slug);
      throw err;
    }
  }
}
