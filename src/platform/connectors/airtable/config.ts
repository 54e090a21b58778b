import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import type { AirtableTable } from './api.ts';
import type { AirtableCursor } from './cursor.ts';

export interface AirtableConfig {
  baseId: string;
  /** Table ids or names; empty: every table of the base. */
  tables: string[];
  /** Sweep for deleted records on every run (else once per SWEEP_EVERY_MS). */
  detectDeletes: boolean;
}

const BASE_ID = /^app[A-Za-z0-9]{14}$/;

export function airtableConfig(config: SyncConfig): AirtableConfig {
  const raw = config.tables;
  const tables = (Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [])
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return { baseId: String(config.base_id ?? '').trim(), tables, detectDeletes: config.detect_deletes === true || config.detect_deletes === 'true' };
}

export function validateAirtableConfig(config: SyncConfig): void {
  if (typeof config.base_id !== 'string' || !BASE_ID.test(config.base_id.trim())) {
    throw invalidField('base_id', 'base_id is the id of an Airtable base: "app" and 14 letters or digits, as in its address');
  }
  const t = config.tables;
  if (t !== undefined && t !== null && typeof t !== 'string' && !(Array.isArray(t) && t.every((x) => typeof x === 'string'))) {
    throw invalidField('tables', 'tables is a list of table ids or names');
  }
  const d = config.detect_deletes;
  if (d !== undefined && d !== null && typeof d !== 'boolean' && d !== 'true' && d !== 'false') throw invalidField('detect_deletes', 'detect_deletes is true or false');
}

/** A table the sync holds, and the config entry that chose it (null: every table is synced). */
export interface SelectedTable {
  table: AirtableTable;
  wanted: string | null;
}

/**
 * The configured tables, in config order (every table when none is configured). A name is
 * matched exactly, then without case; a table renamed at the source is still found through the
 * config entry the cursor remembers for its id. A name matching nothing fails the run, naming the tables.
 */
export function selectTables(all: AirtableTable[], wanted: string[], cursor: AirtableCursor | null, baseId: string): SelectedTable[] {
  if (wanted.length === 0) return all.map((table) => ({ table, wanted: null }));
  const chosen = new Map<string, SelectedTable>();
  for (const w of wanted) {
    const table =
      all.find((t) => t.id === w) ??
      all.find((t) => t.name === w) ??
      all.find((t) => t.name.toLowerCase() === w.toLowerCase()) ??
      all.find((t) => cursor?.tables[t.id]?.wanted === w);
    if (!table) throw new ProviderError('airtable', 404, `base ${baseId} has no table "${w}" (its tables: ${all.map((t) => t.name).join(', ') || 'none'})`);
    if (!chosen.has(table.id)) chosen.set(table.id, { table, wanted: w });
  }
  return [...chosen.values()];
}
