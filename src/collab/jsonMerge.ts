import { isDeepStrictEqual } from 'node:util';

/** A JSON value that could not be merged; `pointer` is an RFC 6901 JSON Pointer ('' = the whole document). */
export interface JsonConflict {
  pointer: string;
  base: unknown;
  current: unknown;
  incoming: unknown;
}

export type JsonMerge = { clean: true; merged: unknown } | { clean: false; conflicts: JsonConflict[] };

/** A key missing on one side (absent is not the same as null). */
const ABSENT = Symbol('absent');
type Side = unknown;

const isObject = (v: Side): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
// An absent side is left out of the JSON answer (undefined), so it is not mistaken for null.
const shown = (v: Side) => (v === ABSENT ? undefined : v);

/**
 * Three-way merge of JSON documents key by key, recursively: a key changed on one side only takes
 * that side (including additions and removals); a key changed on both sides to different values is
 * merged deeper when both are objects, else it is a conflict. Arrays are values, never merged
 * element by element. Key order follows `current`, with keys added by `incoming` appended.
 */
export function mergeJson(base: unknown, current: unknown, incoming: unknown): JsonMerge {
  const conflicts: JsonConflict[] = [];
  const merged = mergeValue(base, current, incoming, '', conflicts);
  return conflicts.length ? { clean: false, conflicts } : { clean: true, merged };
}

function mergeValue(base: Side, current: Side, incoming: Side, pointer: string, conflicts: JsonConflict[]): Side {
  if (isDeepStrictEqual(current, incoming)) return current;
  if (isDeepStrictEqual(base, current)) return incoming;
  if (isDeepStrictEqual(base, incoming)) return current;
  if (isObject(current) && isObject(incoming)) {
    // Both sides changed an object (or both added one): merge its keys against the base's.
    const b = isObject(base) ? base : {};
    const out: Record<string, unknown> = {};
    const keys = [...Object.keys(current), ...Object.keys(incoming).filter((k) => !Object.hasOwn(current, k))];
    for (const key of keys) {
      const v = mergeValue(
        Object.hasOwn(b, key) ? b[key] : ABSENT,
        Object.hasOwn(current, key) ? current[key] : ABSENT,
        Object.hasOwn(incoming, key) ? incoming[key] : ABSENT,
        `${pointer}/${escape(key)}`,
        conflicts,
      );
      if (v !== ABSENT) out[key] = v;
    }
    return out;
  }
  conflicts.push({ pointer, base: shown(base), current: shown(current), incoming: shown(incoming) });
  return current;
}
