import type { Db } from '../db/database.ts';
import { newId, nowIso } from '../util/ids.ts';

/** A webhook as stored (the secret sealed). */
export interface HookRecord {
  id: string;
  project_id: string;
  url: string;
  events: string[];
  path_prefix: string;
  active: boolean;
  secret_sealed: string;
  creator_kind: 'user' | 'key';
  creator_id: string;
  cursor: number;
  failing_since: number | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

type HookRow = Omit<HookRecord, 'events' | 'active'> & { events: string; active: number };

const toRecord = (r: HookRow): HookRecord => ({ ...r, events: JSON.parse(r.events) as string[], active: r.active === 1 });

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

/** The webhooks table. */
export class HookStore {
  constructor(private readonly db: Db) {}

  create(h: NewHook): HookRecord {
    const id = newId('whk');
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO webhooks (id, project_id, url, events, path_prefix, active, secret_sealed, creator_kind, creator_id, cursor, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, h.projectId, h.url, JSON.stringify(h.events), h.pathPrefix, h.active ? 1 : 0, h.seal(id), h.creator.kind, h.creator.id, h.cursor, now, now);
    return this.require(id);
  }

  find(id: string): HookRecord | null {
    const row = this.db.prepare('SELECT * FROM webhooks WHERE id = ?').get(id) as HookRow | undefined;
    return row ? toRecord(row) : null;
  }

  require(id: string): HookRecord {
    const h = this.find(id);
    if (!h) throw new Error(`webhook ${id} vanished`);
    return h;
  }

  /** A project's hooks, oldest first; with `creator`, only those it created. */
  list(projectId: string, creator?: { kind: string; id: string }): HookRecord[] {
    const rows = creator
      ? this.db.prepare('SELECT * FROM webhooks WHERE project_id = ? AND creator_kind = ? AND creator_id = ? ORDER BY created_at, id').all(projectId, creator.kind, creator.id)
      : this.db.prepare('SELECT * FROM webhooks WHERE project_id = ? ORDER BY created_at, id').all(projectId);
    return (rows as HookRow[]).map(toRecord);
  }

  /** Hooks that are on (active and not disabled), of one project or of all. */
  live(projectId?: string): HookRecord[] {
    const rows = projectId
      ? this.db.prepare('SELECT * FROM webhooks WHERE project_id = ? AND active = 1 AND disabled_at IS NULL').all(projectId)
      : this.db.prepare('SELECT * FROM webhooks WHERE active = 1 AND disabled_at IS NULL').all();
    return (rows as HookRow[]).map(toRecord);
  }

  update(id: string, c: HookChanges): HookRecord {
    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (col: string, v: unknown) => {
      sets.push(`${col} = ?`);
      values.push(v);
    };
    if (c.url !== undefined) set('url', c.url);
    if (c.events !== undefined) set('events', JSON.stringify(c.events));
    if (c.pathPrefix !== undefined) set('path_prefix', c.pathPrefix);
    if (c.secretSealed !== undefined) set('secret_sealed', c.secretSealed);
    if (c.cursor !== undefined) set('cursor', c.cursor);
    if (c.active !== undefined) {
      set('active', c.active ? 1 : 0);
      // Switched on by hand: a disabled hook starts afresh.
      if (c.active) {
        sets.push('disabled_at = NULL', 'disabled_reason = NULL', 'failing_since = NULL');
      }
    }
    set('updated_at', nowIso());
    this.db.prepare(`UPDATE webhooks SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
    return this.require(id);
  }

  setCursor(id: string, cursor: number): void {
    this.db.prepare('UPDATE webhooks SET cursor = ? WHERE id = ? AND cursor < ?').run(cursor, id, cursor);
  }

  /** An attempt failed: the failing streak starts now unless it already had. */
  markFailing(id: string, at: number): number {
    this.db.prepare('UPDATE webhooks SET failing_since = coalesce(failing_since, ?) WHERE id = ?').run(at, id);
    return (this.db.prepare('SELECT failing_since FROM webhooks WHERE id = ?').get(id) as { failing_since: number } | undefined)?.failing_since ?? at;
  }

  markSucceeded(id: string): void {
    this.db.prepare('UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL').run(id);
  }

  disable(id: string, reason: string): void {
    this.db.prepare('UPDATE webhooks SET disabled_at = ?, disabled_reason = ?, updated_at = ? WHERE id = ? AND disabled_at IS NULL').run(nowIso(), reason, nowIso(), id);
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM webhooks WHERE id = ?').run(id).changes > 0;
  }
}
