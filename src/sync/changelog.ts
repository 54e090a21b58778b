import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.ts';

export interface ChangeActor {
  type: 'user' | 'agent' | 'sync';
  id: string;
  author: string;
}

/** One node changed by one commit, as the content index recorded it (its audit entry). */
export interface ChangeEntry {
  projectVersion: number;
  nodeId: string;
  /** Path after the change (`.trash/…` for a trashed node; the last path for a permanent delete). */
  path: string;
  /** Path before a move, trash or restore. */
  oldPath: string | null;
  action: string;
  nodeType: string;
  version: number;
  actor: ChangeActor;
  createdAt: string;
}

/** One project commit and every node it changed. */
export interface CommitChanges {
  projectVersion: number;
  commitId: string;
  actor: ChangeActor;
  message: string;
  createdAt: string;
  changes: ChangeEntry[];
}

export interface ChangelogPage {
  entries: ChangeEntry[];
  /** Pass back as `cursor` to continue: the commit number of the last entry given. */
  cursor: number;
  hasMore: boolean;
}

interface AuditRow {
  node_id: string;
  path: string;
  action: string;
  actor_type: ChangeActor['type'];
  actor_id: string;
  author: string;
  details: string;
  created_at: string;
  pv: number;
}

interface CommitRow {
  project_version: number;
  commit_id: string;
  actor_type: ChangeActor['type'];
  actor_id: string;
  author: string;
  message: string;
  created_at: string;
}

const PV = `json_extract(details, '$.project_version')`;

/**
 * Every change of a project after a cursor (a project commit number), from any source: API,
 * git push, sync. Read from the content index's audit entries, which keep permanent deletes
 * too (version rows of a permanently deleted node are gone); an expression index on the commit
 * number (migration 006) keeps a read proportional to what it returns. Push summaries
 * (node_id '') are not node changes and are skipped.
 */
export class Changelog {
  private readonly s: Record<string, Statement>;

  constructor(db: Db) {
    const p = (sql: string) => db.prepare(sql);
    const cols = `node_id, path, action, actor_type, actor_id, author, details, created_at, ${PV} AS pv`;
    this.s = {
      after: p(`SELECT ${cols} FROM content_audit_log WHERE project_id = ? AND ${PV} > ? AND node_id <> '' ORDER BY ${PV}, id LIMIT ?`),
      between: p(`SELECT ${cols} FROM content_audit_log WHERE project_id = ? AND ${PV} > ? AND ${PV} <= ? AND node_id <> '' ORDER BY ${PV}, id`),
      commits: p(`SELECT * FROM project_commits WHERE project_id = ? AND project_version > ? ORDER BY project_version LIMIT ?`),
      latest: p(`SELECT MAX(project_version) AS pv FROM project_commits WHERE project_id = ?`),
    };
  }

  /** The project's last commit number (0 before the first). */
  latest(projectId: string): number {
    return (this.s.latest.get(projectId) as { pv: number | null }).pv ?? 0;
  }

  /**
   * Entries of commits after `cursor`, whole commits only so that the returned cursor is exact:
   * about `limit` entries, more when a single commit is larger.
   */
  page(projectId: string, cursor: number, limit: number): ChangelogPage {
    const rows = this.s.after.all(projectId, cursor, limit + 1) as AuditRow[];
    if (rows.length <= limit) {
      return { entries: rows.map(toEntry), cursor: rows.length ? rows[rows.length - 1]!.pv : cursor, hasMore: false };
    }
    const boundary = rows[limit]!.pv;
    const kept = rows.filter((r) => r.pv < boundary);
    if (kept.length > 0) return { entries: kept.map(toEntry), cursor: kept[kept.length - 1]!.pv, hasMore: true };
    // One commit holds more than `limit` entries: give it whole.
    const whole = this.s.between.all(projectId, boundary - 1, boundary) as AuditRow[];
    const more = (this.s.after.all(projectId, boundary, 1) as AuditRow[]).length > 0;
    return { entries: whole.map(toEntry), cursor: boundary, hasMore: more };
  }

  /** Up to `max` commits after `cursor` with their changes (the live feed's events). */
  commits(projectId: string, cursor: number, max: number): CommitChanges[] {
    const commits = this.s.commits.all(projectId, cursor, max) as CommitRow[];
    if (commits.length === 0) return [];
    const last = commits[commits.length - 1]!.project_version;
    const byPv = new Map<number, ChangeEntry[]>();
    for (const r of this.s.between.all(projectId, cursor, last) as AuditRow[]) {
      const list = byPv.get(r.pv) ?? [];
      list.push(toEntry(r));
      byPv.set(r.pv, list);
    }
    return commits.map((c) => ({
      projectVersion: c.project_version,
      commitId: c.commit_id,
      actor: { type: c.actor_type, id: c.actor_id, author: c.author },
      message: c.message,
      createdAt: c.created_at,
      changes: byPv.get(c.project_version) ?? [],
    }));
  }

  /** Entries of the commits in (`after`, `upTo`]. */
  between(projectId: string, after: number, upTo: number): ChangeEntry[] {
    return (this.s.between.all(projectId, after, upTo) as AuditRow[]).map(toEntry);
  }
}

function toEntry(r: AuditRow): ChangeEntry {
  const d = JSON.parse(r.details) as { version?: number; type?: string; old_path?: string };
  return {
    projectVersion: r.pv,
    nodeId: r.node_id,
    path: r.path,
    oldPath: d.old_path ?? null,
    action: r.action,
    nodeType: d.type ?? 'file',
    version: d.version ?? 0,
    actor: { type: r.actor_type, id: r.actor_id, author: r.author },
    createdAt: r.created_at,
  };
}
