import { DomainError } from '../../errors/domainError.ts';

const MAX_DETAILS = 20;

/**
 * Checks every item of a bulk replace before anything is written. A bad item (an invalid field,
 * a node the caller cannot reach) is a 422 naming its index (`accesses.2.node_id`), all bad
 * items at once; a refusal of the caller itself (403) stays what it is.
 */
export async function checkAll<T, R>(listField: string, items: readonly T[], check: (item: T, index: number) => R | Promise<R>): Promise<R[]> {
  const details: { field: string; message: string }[] = [];
  const out: R[] = [];
  for (const [i, item] of items.entries()) {
    try {
      out.push(await check(item, i));
    } catch (e) {
      if (!(e instanceof DomainError) || (e.code !== 'VALIDATION_ERROR' && e.code !== 'NOT_FOUND' && e.code !== 'CONFLICT')) throw e;
      const at = `${listField}.${i}`;
      const found = Array.isArray(e.details) ? (e.details as { field?: string; message?: string }[]) : [];
      if (e.code === 'NOT_FOUND') details.push({ field: `${at}.node_id`, message: e.message });
      else if (found.length) for (const d of found) details.push({ field: `${at}.${d.field ?? ''}`.replace(/\.$/, ''), message: d.message ?? e.message });
      else details.push({ field: at, message: e.message });
    }
  }
  if (details.length) {
    const shown = details.slice(0, MAX_DETAILS);
    throw new DomainError('VALIDATION_ERROR', `Invalid ${listField}: check ${[...new Set(shown.map((d) => d.field))].join(', ')}. Nothing was changed.`, shown);
  }
  return out;
}

/** A second item with the same key (a node, a name) is refused at its index. */
export function requireUnique<T>(listField: string, field: string, items: readonly T[], key: (item: T) => string): void {
  const seen = new Map<string, number>();
  const details: { field: string; message: string }[] = [];
  items.forEach((item, i) => {
    const k = key(item);
    const first = seen.get(k);
    if (first === undefined) seen.set(k, i);
    else details.push({ field: `${listField}.${i}.${field}`, message: `the same ${field} as item ${first}` });
  });
  if (details.length) throw new DomainError('VALIDATION_ERROR', `Invalid ${listField}: each ${field} may appear once. Nothing was changed.`, details.slice(0, MAX_DETAILS));
}
