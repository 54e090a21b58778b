import { isDeepStrictEqual } from 'node:util';
import { mergeText } from './textMerge.ts';

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
  const merged = mergeValue(base, current, incoming, '', conflicts, 'current');
  return conflicts.length ? { clean: false, conflicts } : { clean: true, merged };
}

/**
 * The merge as text for a person to resolve: the document (in the stored form) with git-style
 * conflict markers around exactly the conflicting keys. The key merge is made three times, each
 * taking one side at the conflicts; those three documents differ only there, so a line merge of
 * them marks exactly those keys.
 */
export function markedJson(base: unknown, current: unknown, incoming: unknown, labels: { base: string; current: string; incoming: string }): string {
  const at = (pick: Pick) => JSON.stringify(mergeValue(base, current, incoming, '', [], pick), null, 2) + '\n';
  const r = mergeText(at('base'), at('current'), at('incoming'), labels);
  return r.clean ? r.merged : r.marked;
}

/** The side a conflict takes in the merged value. */
type Pick = 'base' | 'current' | 'incoming';

function mergeValue(base: Side, current: Side, incoming: Side, pointer: string, conflicts: JsonConflict[], pick: Pick): Side {
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
        pick,
      );
      if (v !== ABSENT) out[key] = v;
    }
    return out;
  }
  conflicts.push({ pointer, base: shown(base), current: shown(current), incoming: shown(incoming) });
  return pick === 'base' ? base : pick === 'incoming' ? incoming : current;
}
