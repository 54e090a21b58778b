import type { z } from 'zod';
import { validationError } from './errors.ts';

export type InputSource = 'body' | 'query' | 'params';

/**
 * Parses untrusted input with a zod schema; a failure is a 422 whose details name each
 * offending field (`{field, message}`), never a 500.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, source: InputSource): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.map((seg) => (source === 'params' ? snakeCase(seg) : String(seg))).join('.') : source,
    message: issue.message,
  }));
  const fields = [...new Set(details.map((d) => d.field))].join(', ');
  throw validationError(`Invalid ${source}: check ${fields}.`, details);
}

/** Route params are camelCase in code (`snapshotId`); clients know them in snake_case (`snapshot_id`). */
const snakeCase = (segment: PropertyKey) => (typeof segment === 'string' ? segment.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : String(segment));

/**
 * parseInput for a body with one long list (a bulk write of 100,000 files): the body is checked
 * with `schema` (where the list is `z.array(z.unknown())`), then each item with `itemSchema`,
 * yielding to the event loop every few milliseconds so that other requests are served meanwhile.
 */
export async function parseListInput<S extends z.ZodType, I extends z.ZodType, K extends string, R = z.output<I>>(
  schema: S,
  listField: K,
  itemSchema: I,
  input: unknown,
  /** Turns each valid item into what the route needs (may throw an AppError), in the same slices. */
  map: (item: z.output<I>, index: number) => R = (item) => item as R,
): Promise<Omit<z.output<S>, K> & Record<K, R[]>> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  const body = parseInput(schema, input, 'body') as Record<string, unknown>;
  const list = body[listField] as unknown[];
  const items: R[] = [];
  const details: { field: string; message: string }[] = [];
  let since = performance.now();
  for (let i = 0; i < list.length; i++) {
    if (performance.now() - since > 5) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    }
    const r = itemSchema.safeParse(list[i]);
    if (r.success) {
      if (details.length === 0) items.push(map(r.data, i));
    }
    else if (details.length < 20) for (const issue of r.error.issues) details.push({ field: [listField, i, ...issue.path].join('.'), message: issue.message });
  }
  if (details.length) throw validationError(`Invalid body: check ${[...new Set(details.map((d) => d.field))].join(', ')}.`, details);
  return { ...body, [listField]: items } as Omit<z.output<S>, K> & Record<K, R[]>;
}
