import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';
import { normalizeId } from './types.ts';

export interface NotionConfig {
  /** The page whose sub-pages are synced (with itself), or null. */
  rootPageId: string | null;
  databaseIds: string[];
  /** Minutes between reconciling listings (see pull.ts); 0: every run. */
  reconcileMinutes: number;
}

export const DEFAULT_RECONCILE_MINUTES = 60;

/** A Notion id as given: 32 hex digits with or without dashes, or the page's address ending in them. */
function idFrom(raw: string): string | null {
  const m = /([0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})(?:[?#].*)?$/i.exec(raw.trim());
  return m ? normalizeId(m[1]) : null;
}

function list(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  return raw.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x !== '');
}

export function notionConfig(config: SyncConfig): NotionConfig {
  const root = typeof config.root_page_id === 'string' && config.root_page_id.trim() !== '' ? idFrom(config.root_page_id) : null;
  const minutes = Number(config.reconcile_minutes ?? DEFAULT_RECONCILE_MINUTES);
  return {
    rootPageId: root,
    databaseIds: [...new Set(list(config.database_ids).map((d) => idFrom(d)).filter((d): d is string => d !== null))],
    reconcileMinutes: Number.isFinite(minutes) && minutes >= 0 ? minutes : DEFAULT_RECONCILE_MINUTES,
  };
}

export function validateNotionConfig(config: SyncConfig): void {
  const root = config.root_page_id;
  if (root !== undefined && root !== null && root !== '' && (typeof root !== 'string' || !idFrom(root))) {
    throw invalidField('root_page_id', 'root_page_id is the id of a Notion page (32 hexadecimal digits, as at the end of its address)');
  }
  const dbs = config.database_ids;
  if (dbs !== undefined && dbs !== null && typeof dbs !== 'string' && !(Array.isArray(dbs) && dbs.every((d) => typeof d === 'string'))) {
    throw invalidField('database_ids', 'database_ids is a list of Notion database ids');
  }
  const bad = list(dbs).find((d) => !idFrom(d));
  if (bad !== undefined) throw invalidField('database_ids', `"${bad}" is not a Notion database id (32 hexadecimal digits, as in its address)`);
  if (!idFrom(String(root ?? '')) && list(dbs).length === 0) {
    throw invalidField('root_page_id', 'give root_page_id (a page whose sub-pages are synced), database_ids, or both');
  }
  const m = config.reconcile_minutes;
  if (m !== undefined && m !== null && m !== '' && !(Number.isInteger(Number(m)) && Number(m) >= 0)) {
    throw invalidField('reconcile_minutes', 'reconcile_minutes is a whole number of minutes, 0 or more');
  }
}
