import type { Selectable } from 'kysely';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { IngestRulesTable } from '../../db/metadata/tables/ingest.ts';
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

type Row = Selectable<IngestRulesTable>;

const fromRow = ({ seq: _seq, ...r }: Row): RuleRecord => ({
  ...r,
  match: JSON.parse(r.match) as RuleMatch,
  json_schema: r.json_schema === null ? null : (JSON.parse(r.json_schema) as Record<string, unknown>),
});

export type NewRule = Omit<RuleRecord, 'id' | 'created_at' | 'updated_at'>;

/** The `ingest_rules` table, on the metadata store. Authorization is the caller's business. */
export class RuleStore {
  constructor(private readonly metadata: MetadataStore) {}

  async create(input: NewRule): Promise<RuleRecord> {
    const now = nowIso();
    const rule: RuleRecord = { ...input, id: newId('rul'), created_at: now, updated_at: now };
    await this.metadata.db
      .insertInto('ingest_rules')
      .values({ ...rule, match: JSON.stringify(rule.match), json_schema: rule.json_schema === null ? null : JSON.stringify(rule.json_schema) })
      .execute();
    return rule;
  }

  async find(id: string): Promise<RuleRecord | null> {
    const r = await this.metadata.db.selectFrom('ingest_rules').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /** In creation order (`seq` among rules made in the same millisecond): the order in which rules are matched. */
  async listByProject(projectId: string): Promise<RuleRecord[]> {
    const rows = await this.metadata.db.selectFrom('ingest_rules').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('seq').execute();
    return rows.map(fromRow);
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('ingest_rules').where('id', '=', id).execute();
  }
}
