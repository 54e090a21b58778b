import type { Selectable, Updateable } from 'kysely';
import type { MetadataDb, MetadataStore } from '../db/metadata/metadataStore.ts';
import type { WebhooksTable } from '../db/metadata/tables/webhooks.ts';
import { newId, nowIso } from '../util/ids.ts';

/** A webhook as stored (the secret sealed), its events parsed and its flag a boolean. */
export interface HookRecord extends Omit<Selectable<WebhooksTable>, 'events' | 'active'> {
  events: string[];
  active: boolean;
}

const toRecord = (r: Selectable<WebhooksTable>): HookRecord => ({ ...r, events: JSON.parse(r.events) as string[], active: r.active === 1 });

export interface NewHook {
  projectId: string;
  url: string;
  events: string[];
  pathPrefix: string;
  active: boolean;
  creator: { kind: 'user' | 'key'; id: string };
  cursor: number;
  /** Seals the secret with the new hook's id as its record. */
  seal: (hookId: string) => string;
}

export interface HookChanges {
  url?: string;
  events?: string[];
  pathPrefix?: string;
  active?: boolean;
  secretSealed?: string;
  /** Where queuing resumes (set when a hook is switched back on: what happened while off is not sent). */
  cursor?: number;
}

/** The webhooks table, on the metadata store. */
export class HookStore {
  constructor(private readonly metadata: MetadataStore) {}

  async create(h: NewHook): Promise<HookRecord> {
    const id = newId('whk');
    const now = nowIso();
    const row = await this.metadata.db
      .insertInto('webhooks')
      .values({
        id,
        project_id: h.projectId,
        url: h.url,
        events: JSON.stringify(h.events),
        path_prefix: h.pathPrefix,
        active: h.active ? 1 : 0,
        secret_sealed: h.seal(id),
        creator_kind: h.creator.kind,
        creator_id: h.creator.id,
        cursor: h.cursor,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  async find(id: string): Promise<HookRecord | null> {
    const row = await this.metadata.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** A project's hooks, oldest first; with `creator`, only those it created. */
  async list(projectId: string, creator?: { kind: HookRecord['creator_kind']; id: string }): Promise<HookRecord[]> {
    let q = this.metadata.db.selectFrom('webhooks').selectAll().where('project_id', '=', projectId);
    if (creator) q = q.where('creator_kind', '=', creator.kind).where('creator_id', '=', creator.id);
    return (await q.orderBy('created_at').orderBy('id').execute()).map(toRecord);
  }

  /** Hooks that are on (active and not disabled), of one project or of all. */
  async live(projectId?: string): Promise<HookRecord[]> {
    let q = this.metadata.db.selectFrom('webhooks').selectAll().where('active', '=', 1).where('disabled_at', 'is', null);
    if (projectId) q = q.where('project_id', '=', projectId);
    return (await q.execute()).map(toRecord);
  }

  async update(id: string, c: HookChanges): Promise<HookRecord> {
    const sets: Updateable<WebhooksTable> = {};
    if (c.url !== undefined) sets.url = c.url;
    if (c.events !== undefined) sets.events = JSON.stringify(c.events);
    if (c.pathPrefix !== undefined) sets.path_prefix = c.pathPrefix;
    if (c.secretSealed !== undefined) sets.secret_sealed = c.secretSealed;
    if (c.cursor !== undefined) sets.cursor = c.cursor;
    if (c.active !== undefined) {
      sets.active = c.active ? 1 : 0;
      // Switched on by hand: a disabled hook starts afresh.
      if (c.active) Object.assign(sets, { disabled_at: null, disabled_reason: null, failing_since: null });
    }
    sets.updated_at = nowIso();
    const row = await this.metadata.db.updateTable('webhooks').set(sets).where('id', '=', id).returningAll().executeTakeFirst();
    if (!row) throw new Error(`webhook ${id} vanished`);
    return toRecord(row);
  }

  /**
   * Moves a hook's cursor from `from` (as read) to `to`, a compare-and-swap: false when it had
   * moved meanwhile (another process queued those commits, or the hook was switched on again).
   * `db`: the transaction it belongs to.
   */
  async moveCursor(id: string, from: number, to: number, db: MetadataDb = this.metadata.db): Promise<boolean> {
    const r = await db.updateTable('webhooks').set({ cursor: to }).where('id', '=', id).where('cursor', '=', from).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** An attempt failed: the failing streak starts now unless it already had. Answers when it started. */
  async markFailing(id: string, at: number): Promise<number> {
    const row = await this.metadata.db
      .updateTable('webhooks')
      .set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', eb.val(at)) }))
      .where('id', '=', id)
      .returning('failing_since')
      .executeTakeFirst();
    return row?.failing_since ?? at;
  }

  async markSucceeded(id: string): Promise<void> {
    await this.metadata.db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', id).where('failing_since', 'is not', null).execute();
  }

  async disable(id: string, reason: string): Promise<void> {
    const now = nowIso();
    await this.metadata.db.updateTable('webhooks').set({ disabled_at: now, disabled_reason: reason, updated_at: now }).where('id', '=', id).where('disabled_at', 'is', null).execute();
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.metadata.db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }
}
