/**
 * JSON Pointer (RFC 6901): the one implementation the query_json tool and tables use.
 * `''` is the whole document; `/a/0` the first element of member `a`; `~1` is `/` and `~0` is `~`
 * inside a token. Errors carry the API's codes (NOT_FOUND for a member that is not there,
 * VALIDATION_ERROR for a pointer that cannot address anything), so every surface maps them as is.
 */

export class JsonPointerError extends Error {
  constructor(
    readonly code: 'NOT_FOUND' | 'VALIDATION_ERROR',
    message: string,
    readonly details: unknown,
  ) {
    super(message);
    this.name = 'JsonPointerError';
  }
}

/** Nothing at `pointer` (a missing member, an index past the end, `-`). */
export const pointerNotFound = (pointer: string) => new JsonPointerError('NOT_FOUND', `Nothing at JSON Pointer ${pointer}.`, { pointer });

/** A pointer that cannot address anything in this document (`field` names the request field that carried it). */
export const pointerInvalid = (field: string, pointer: string, message: string) =>
  new JsonPointerError('VALIDATION_ERROR', `${field}: ${message}`, [{ field, message, pointer }]);

/** The reference tokens of `pointer`, unescaped; an empty pointer is []. */
export function parsePointer(pointer: string, field = 'pointer'): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw pointerInvalid(field, pointer, 'a JSON Pointer is empty or starts with /');
  // A `~` must be followed by 0 or 1 (RFC 6901 section 3); `~1` is decoded before `~0` (section 4).
  if (/~(?![01])/.test(pointer)) throw pointerInvalid(field, pointer, 'in a JSON Pointer, ~ is written ~0 and / is written ~1');
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The pointer of `tokens` (escaping `~` and `/`). */
export function formatPointer(tokens: readonly string[]): string {
  return tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

export const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => v !== null && typeof v === 'object';
const isObject = (v: unknown): v is Record<string, unknown> => isContainer(v) && !Array.isArray(v);

/**
 * The array index a token names (RFC 6901: `0` or digits without a leading zero); `-` (the
 * element after the last) is `length`. A token that is not an index is a VALIDATION_ERROR.
 */
export function arrayIndex(arr: readonly unknown[], token: string, at: string, field: string): number {
  if (token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw pointerInvalid(field, at, `"${token}" is not an array index`);
  return Number(token);
}

/**
 * The member `token` of `container`, or NOT_FOUND; going into a string, number, boolean or null
 * is a VALIDATION_ERROR (nothing can be beneath it). `at` is the pointer up to and with `token`.
 */
export function childOf(container: unknown, token: string, at: string, field: string): unknown {
  if (Array.isArray(container)) {
    const i = arrayIndex(container, token, at, field);
    if (i >= container.length) throw pointerNotFound(at);
    return container[i];
  }
  if (isObject(container)) {
    if (!Object.hasOwn(container, token)) throw pointerNotFound(at);
    return container[token];
  }
  throw pointerInvalid(field, at, `${at.slice(0, at.lastIndexOf('/')) || '/'} is ${describe(container)}, not an object or an array`);
}

/** The value at `pointer` in `doc` (NOT_FOUND naming the pointer when a member is missing). */
export function resolvePointer(doc: unknown, pointer: string, field = 'pointer'): unknown {
  return resolveTokens(doc, parsePointer(pointer, field), field);
}

export function resolveTokens(doc: unknown, tokens: readonly string[], field = 'pointer'): unknown {
  let cur = doc;
  for (let i = 0; i < tokens.length; i++) cur = childOf(cur, tokens[i]!, formatPointer(tokens.slice(0, i + 1)), field);
  return cur;
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
