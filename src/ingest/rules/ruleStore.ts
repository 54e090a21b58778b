import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** Which files a rule applies to when a submission names no rule. */
export interface RuleMatch {
  /** Lower case, without the dot. */
  extensions?: string[];
  /** Lower case; `type/*` matches every subtype. */
  mime_types?: string[];
}

export interface RuleRecord {
  id: string;
  project_id: string;
  name: string;
  description: string;
  match: RuleMatch;
  target: 'markdown' | 'json';
  json_schema: Record<string, unknown> | null;
  instructions: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

type Row = Omit<RuleRecord, 'match' | 'json_schema'> & { match: string; json_schema: string | null };

const fromRow = (r: Row): RuleRecord => ({
  ...r,
  match: JSON.parse(r.match) as RuleMatch,
  json_schema: r.json_schema === null ? null : (JSON.parse(r.json_schema) as Record<string, unknown>),
});

export type NewRule = Omit<RuleRecord, 'id' | 'created_at' | 'updated_at'>;

/** The `ingest_rules` table. Authorization is the caller's business. */
export class RuleStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  create(input: NewRule): RuleRecord {
    const now = nowIso();
    const rule: RuleRecord = { ...input, id: newId('rul'), created_at: now, updated_at: now };
    this.sql(`INSERT INTO ingest_rules (id, project_id, name, description, match, target, json_schema, instructions, created_by, created_at, updated_at)
      VALUES (@id, @project_id, @name, @description, @match, @target, @json_schema, @instructions, @created_by, @created_at, @updated_at)`).run({
      ...rule,
      match: JSON.stringify(rule.match),
      json_schema: rule.json_schema === null ? null : JSON.stringify(rule.json_schema),
    });
    return rule;
  }

  find(id: string): RuleRecord | null {
    const r = this.sql('SELECT * FROM ingest_rules WHERE id = ?').get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  /** In creation order: the order in which rules are matched. */
  listByProject(projectId: string): RuleRecord[] {
    return (this.sql('SELECT * FROM ingest_rules WHERE project_id = ? ORDER BY created_at, rowid').all(projectId) as Row[]).map(fromRow);
  }

  delete(id: string): void {
    this.sql('DELETE FROM ingest_rules WHERE id = ?').run(id);
  }
}
