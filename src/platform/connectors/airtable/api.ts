import type { ConnectorContext } from '../../runtime/connector.ts';

/** A table as the base schema (`GET /v0/meta/bases/{baseId}/tables`) describes it. */
export interface AirtableTable {
  id: string;
  name: string;
  primaryFieldId: string;
}

export interface AirtableRecord {
  id: string;
  createdTime: string;
  fields: Record<string, unknown>;
}

export interface RecordsPage {
  records: AirtableRecord[];
  /** The answer's `Date` header (Airtable's clock), epoch ms; null when missing or unreadable. */
  serverTime: number | null;
  last: boolean;
}

export const PAGE_SIZE = 100;

export async function listTables(ctx: ConnectorContext, baseId: string): Promise<AirtableTable[]> {
  const res = await ctx.http.request({ url: `/v0/meta/bases/${encodeURIComponent(baseId)}/tables` });
  return res.json<{ tables: AirtableTable[] }>().tables;
}

export interface ListOptions {
  /** Only records modified after this instant (an ISO timestamp this connector wrote). */
  since?: string | null;
  /** Only this field (the id sweep asks for the primary field alone, to keep pages small). */
  onlyField?: string;
}

/**
 * A table's records, page by page (`pageSize` 100, then `offset`). An incremental listing
 * filters on `LAST_MODIFIED_TIME()`: Airtable's REST list has no change feed, and cannot sort
 * on a formula, so the cursor comes from the answer's clock rather than from the records.
 */
/**
 * Records modified (in a non-computed field) or created after `since`: a record created with no
 * value has no modification time, so creation counts too. `since` is an ISO timestamp this
 * connector wrote, never user input.
 */
export function changedSince(since: string): string {
  return `OR(IS_AFTER(LAST_MODIFIED_TIME(), '${since}'), IS_AFTER(CREATED_TIME(), '${since}'))`;
}

export async function* listRecords(ctx: ConnectorContext, baseId: string, tableId: string, o: ListOptions = {}): AsyncGenerator<RecordsPage> {
  let offset: string | undefined;
  do {
    const res = await ctx.http.request({
      url: `/v0/${encodeURIComponent(baseId)}/${encodeURIComponent(tableId)}`,
      query: {
        pageSize: PAGE_SIZE,
        offset,
        returnFieldsByFieldId: 'false',
        filterByFormula: o.since ? changedSince(o.since) : undefined,
        'fields[]': o.onlyField,
      },
    });
    const body = res.json<{ records: AirtableRecord[]; offset?: string }>();
    offset = body.offset || undefined;
    const date = Date.parse(String(res.headers.date ?? ''));
    yield { records: body.records, serverTime: Number.isNaN(date) ? null : date, last: offset === undefined };
  } while (offset !== undefined);
}
