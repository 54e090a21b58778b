import { isDeepStrictEqual } from 'node:util';
import type { ConnectorContext, LocalChange, PushOutcome, SourceResponse } from '../../runtime/connector.ts';
import { ProviderError, providerMessage } from '../../runtime/providerError.ts';
import { listTables, type AirtableRecord } from './api.ts';
import { airtableConfig } from './config.ts';
import { fieldsVersion, tableFolders, tableIdOf } from './records.ts';

/** Airtable's limit of records per create or update request. */
const BATCH = 10;
/** Answers that refuse a batch (a bad value, a computed field, a vanished record): read here, not thrown. */
const REFUSALS = [400, 403, 404, 422];

interface Write {
  index: number;
  tableId: string;
  /** The record (an update), or null (a create). */
  id: string | null;
  fields: Record<string, unknown>;
  /** A create's folder: the new node's path is `<folder>/<record id>.json`. */
  folder?: string;
}

/**
 * Sends row edits back: only the fields that changed (a removed field is cleared with null),
 * PATCHed 10 records per request with `typecast: false` so a value is never silently
 * converted; new rows (a node added in a table's folder) are POSTed the same way. When Airtable
 * refuses a batch, its records are sent one by one, so only the bad ones fail, with Airtable's words.
 */
export async function pushAirtable(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]> {
  const { baseId } = airtableConfig(ctx.config);
  const outcomes: PushOutcome[] = new Array(changes.length);
  const writes: Write[] = [];
  let folders: Map<string, string> | null = null;

  for (const [index, change] of changes.entries()) {
    if (change.kind === 'delete') {
      outcomes[index] = refuse('Airtable rows are not deleted from here: delete the row in Airtable; it leaves the project with a later run.');
      continue;
    }
    const content = asObject(change.content);
    const fields = asObject(content?.fields);
    if (!content || !fields) {
      outcomes[index] = refuse('a row node holds {"fields": {…}} (and, once synced, its id and createdTime)');
      continue;
    }
    if (change.kind === 'create') {
      try {
        folders ??= await tableFoldersOf(ctx, baseId);
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        outcomes[index] = refuse(err.message);
        continue;
      }
      const folder = change.path.split('/')[0]!;
      const tableId = [...folders].find(([, f]) => f === folder)?.[0];
      if (!tableId || !change.path.includes('/')) outcomes[index] = refuse(`${change.path} is not in a synced table's folder (${[...folders.values()].join(', ')})`);
      else writes.push({ index, tableId, id: null, fields, folder });
      continue;
    }
    const previous = asObject(change.previous) ?? {};
    const tableId = change.known.meta.tableId;
    if (content.id !== previous.id || content.createdTime !== previous.createdTime) {
      outcomes[index] = refuse('id and createdTime are Airtable\'s: only fields change');
    } else if (typeof tableId !== 'string') {
      outcomes[index] = refuse('the row\'s table is unknown: run the sync again before editing it');
    } else {
      const before = asObject(previous.fields) ?? {};
      const delta: Record<string, unknown> = {};
      for (const k of new Set([...Object.keys(fields), ...Object.keys(before)])) {
        if (!isDeepStrictEqual(fields[k], before[k])) delta[k] = fields[k] === undefined ? null : fields[k];
      }
      if (Object.keys(delta).length === 0) outcomes[index] = { ok: true, sourceId: change.sourceId, sourceVersion: change.known.sourceVersion };
      else writes.push({ index, tableId, id: change.sourceId, fields: delta });
    }
  }

  for (const group of batches(writes)) await send(ctx, baseId, group, outcomes);
  return outcomes;
}

/** Writes grouped by table and kind, at most BATCH per group, in the order they came. */
function batches(writes: Write[]): Write[][] {
  const groups = new Map<string, Write[][]>();
  for (const w of writes) {
    const key = `${w.tableId}:${w.id === null ? 'create' : 'update'}`;
    const list = groups.get(key) ?? groups.set(key, [[]]).get(key)!;
    if (list.at(-1)!.length === BATCH) list.push([]);
    list.at(-1)!.push(w);
  }
  return [...groups.values()].flat();
}

async function send(ctx: ConnectorContext, baseId: string, group: Write[], outcomes: PushOutcome[]): Promise<void> {
  const create = group[0]!.id === null;
  const res = await ctx.http.request({
    method: create ? 'POST' : 'PATCH',
    url: `/v0/${encodeURIComponent(baseId)}/${encodeURIComponent(group[0]!.tableId)}`,
    json: { records: group.map((w) => (create ? { fields: w.fields } : { id: w.id, fields: w.fields })), typecast: false },
    accept: REFUSALS,
  });
  if (REFUSALS.includes(res.status)) {
    if (group.length === 1) outcomes[group[0]!.index] = refuse(`Airtable refused the change: ${airtableMessage(res)}`);
    else for (const w of group) await send(ctx, baseId, [w], outcomes);
    return;
  }
  const records = res.json<{ records: AirtableRecord[] }>().records;
  group.forEach((w, i) => {
    // Creates come back in the order sent; updates are matched by id.
    const record = create ? records[i] : records.find((r) => r.id === w.id);
    if (!record) outcomes[w.index] = refuse('Airtable did not return the row');
    else if (create) outcomes[w.index] = { ok: true, sourceId: record.id, sourceVersion: fieldsVersion(record.fields), path: `${w.folder}/${record.id}.json`, meta: { tableId: w.tableId } };
    else outcomes[w.index] = { ok: true, sourceId: record.id, sourceVersion: fieldsVersion(record.fields) };
  });
}

/**
 * The folders of the synced tables, as the pull named them. The pull finds a table renamed at
 * the source through its cursor, which a push does not have: the rows the sync holds (moved to
 * the renamed table's folder by this run's pull) name such a table and its folder instead, so a
 * configured name that no longer matches does not refuse every new row.
 */
async function tableFoldersOf(ctx: ConnectorContext, baseId: string): Promise<Map<string, string>> {
  const { tables: wanted } = airtableConfig(ctx.config);
  const all = await listTables(ctx, baseId);
  const held = new Map<string, string>();
  for (const k of ctx.known.all()) {
    const id = tableIdOf(k);
    if (id !== null && !held.has(id)) held.set(id, k.path.split('/')[0]!);
  }
  const selected =
    wanted.length === 0 ? all : all.filter((t) => held.has(t.id) || wanted.some((w) => w === t.id || w === t.name || w.toLowerCase() === t.name.toLowerCase()));
  const named = tableFolders(selected);
  return new Map(selected.map((t) => [t.id, held.get(t.id) ?? named.get(t.id)!]));
}

/** Airtable's error: `{error: {type, message}}` or `{error: "NOT_FOUND"}`. */
function airtableMessage(res: SourceResponse): string {
  try {
    const e = res.json<{ error?: { type?: string; message?: string } | string }>().error;
    if (e && typeof e === 'object' && e.type) return e.message ? `${e.message} (${e.type})` : e.type;
  } catch {
    /* not JSON: the generic reader below */
  }
  return providerMessage(res.body, res.status);
}

function refuse(message: string): PushOutcome {
  return { ok: false, message };
}

function asObject(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
