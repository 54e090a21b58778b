/**
 * A database value as JSON: numbers, strings, booleans and null stay; integers beyond 2^53 and
 * non-finite floats become strings (no silent rounding); dates become ISO 8601 strings; binary
 * values become base64 strings; JSON documents and arrays keep their shape.
 */
export function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    case 'object':
      if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
      if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      if (Array.isArray(v)) return v.map(jsonValue);
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonValue(x)]));
    default:
      return String(v);
  }
}

/**
 * Column names made unique (`id`, `id` → `id`, `id_2`), so that a row can be an object: a
 * join's two `id` columns must not overwrite each other.
 */
export function uniqueNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.map((name) => {
    let candidate = name;
    for (let n = 2; seen.has(candidate); n++) candidate = `${name}_${n}`;
    seen.add(candidate);
    return candidate;
  });
}

/** A row as an object under unique column names; without a prototype, so a column named `__proto__` is just a key. */
export function rowObject(names: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  const o = Object.create(null) as Record<string, unknown>;
  for (let i = 0; i < names.length; i++) o[names[i]!] = jsonValue(values[i]);
  return o;
}
