import type { z } from 'zod';
import { validationError } from './errors.ts';

export type InputSource = 'body' | 'query' | 'params';

/**
 * Parses untrusted input with a zod schema; a failure is a 422 whose details name each
 * offending field (`{field, message}`), never a 500.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, source: InputSource): z.output<S> {
  const result = parseAcceptingNull(schema, input ?? {});
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
    const r = parseAcceptingNull(itemSchema, list[i]);
    if (r.success) {
      if (details.length === 0) items.push(map(r.data, i));
    }
    else if (details.length < 20) for (const issue of r.error.issues) details.push({ field: [listField, i, ...issue.path].join('.'), message: issue.message });
  }
  if (details.length) throw validationError(`Invalid body: check ${[...new Set(details.map((d) => d.field))].join(', ')}.`, details);
  return { ...body, [listField]: items } as Omit<z.output<S>, K> & Record<K, R[]>;
}

type Parsed<S extends z.ZodType> = z.ZodSafeParseResult<z.output<S>>;
type Key = PropertyKey;

/**
 * `schema.safeParse`, where `null` stands for "absent" in any optional field at any depth (clients
 * such as PuppyOne's send `null` for every optional field they leave out): a field whose `null`
 * fails is left out and the input parsed again, unless leaving it out fails too (the field is
 * required, and its error is the one about `null`). Only failed parses pay for this.
 */
export function parseAcceptingNull<S extends z.ZodType>(schema: S, input: unknown): Parsed<S> {
  let result = schema.safeParse(input) as Parsed<S>;
  if (result.success) return result;
  let dropped: Key[][] = [];
  for (let round = 0; round < 8 && !result.success; round++) {
    // Only where null itself was the wrong type: a rule over several fields ("not both") keeps its null.
    const more: Key[][] = result.error.issues.filter((i) => i.code === 'invalid_type').map((i) => i.path as Key[]).filter((p: Key[]) => p.length > 0 && valueAt(input, p) === null && !dropped.some((d) => samePath(d, p)));
    if (more.length === 0) break;
    const tried = [...dropped, ...more];
    const retry = schema.safeParse(without(input, tried)) as Parsed<S>;
    // A field still in error once left out is required: its `null` stays, with the error it had.
    const required: Key[][] = retry.success ? [] : retry.error.issues.map((i) => i.path as Key[]).filter((p) => more.some((m) => samePath(m, p)));
    dropped = tried.filter((p) => !required.some((r) => samePath(r, p)));
    result = required.length ? (schema.safeParse(without(input, dropped)) as Parsed<S>) : retry;
    if (required.length) break;
  }
  return result;
}

const samePath = (a: readonly Key[], b: readonly Key[]) => a.length === b.length && a.every((k, i) => k === b[i]);

function valueAt(value: unknown, path: readonly Key[]): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<Key, unknown>)[k];
  }
  return v;
}

/** A copy of `value` without the fields at `paths` (only the objects and arrays on the way are copied). */
function without(value: unknown, paths: readonly (readonly Key[])[]): unknown {
  if (paths.length === 0 || value === null || typeof value !== 'object') return value;
  const copy = (Array.isArray(value) ? [...value] : { ...value }) as Record<Key, unknown>;
  const byHead = new Map<Key, Key[][]>();
  for (const p of paths) {
    if (p.length === 1) delete copy[p[0]!];
    else byHead.set(p[0]!, [...(byHead.get(p[0]!) ?? []), p.slice(1)]);
  }
  for (const [k, rest] of byHead) if (k in copy) copy[k] = without(copy[k], rest);
  return copy;
}
