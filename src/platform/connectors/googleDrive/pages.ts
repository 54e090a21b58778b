import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { itemOf, type Wanted } from './items.ts';

/** Downloads and exports in flight at once: Drive answers each in tens to hundreds of ms, mostly waiting. */
export const FETCH_CONCURRENCY = 4;
/** A page (one commit) holds at most this many items… */
const PAGE_ITEMS = 100;
/** …and about this much content, so a folder of large files is not held in memory at once. */
const PAGE_BYTES = 32 * 1024 * 1024;

/**
 * The changes of `deletes` and of the wanted files (fetched FETCH_CONCURRENCY at a time, in
 * order), cut into pages. Every page but the last carries `midCursor` (a run cut short starts
 * again from there: unchanged files are not fetched twice); the last carries `lastCursor`, and
 * is yielded even when empty, so the cursor moves.
 */
export async function* fetchPages(ctx: ConnectorContext, deletes: SourceChange[], wanted: Wanted[], midCursor: string | null, lastCursor: () => string): AsyncGenerator<PullPage> {
  let page: SourceChange[] = [...deletes];
  let bytes = 0;
  const inFlight: Promise<SourceChange | null>[] = [];
  let next = 0;
  const fill = () => {
    while (inFlight.length < FETCH_CONCURRENCY && next < wanted.length) {
      const p = itemOf(ctx, wanted[next++]!);
      // Awaited in order below; a failure while an earlier one is awaited must not go unhandled.
      p.catch(() => {});
      inFlight.push(p);
    }
  };
  fill();
  while (inFlight.length > 0) {
    const change = await inFlight.shift()!;
    fill();
    if (!change) continue;
    page.push(change);
    bytes += change.kind === 'upsert' ? sizeOf(change.item.content) : 0;
    if (page.length >= PAGE_ITEMS || bytes >= PAGE_BYTES) {
      yield { changes: page, cursor: midCursor };
      page = [];
      bytes = 0;
    }
  }
  yield { changes: page, cursor: lastCursor() };
}

function sizeOf(content: unknown): number {
  if (Buffer.isBuffer(content)) return content.length;
  if (typeof content === 'string') return content.length;
  return JSON.stringify(content)?.length ?? 0;
}
