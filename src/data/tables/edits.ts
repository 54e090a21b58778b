import { arrayIndex, childOf, describe, formatPointer, isContainer, pointerInvalid } from '../../util/jsonPointer.ts';

/*
 * The data verbs of a table as pure functions over its document. They never change the document
 * they are given: the containers on the pointer's way are copied (shallowly) and everything else
 * is shared, so a cached document stays valid for readers while a change is built, and a change
 * of one row of a 5 MiB table copies one array of references, not the table.
 */

/** A changed document and the pointer of the member that changed (`-` resolved to its index). */
export interface Edit {
  doc: unknown;
  pointer: string;
  /** PUT only: the member did not exist before. */
  created: boolean;
  /** The deepest member present before and after that holds every difference (its tokens): the part to re-encode. */
  within: readonly string[];
}

/** Sets an own enumerable property even when the key is `__proto__` (plain assignment would set the prototype). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * `doc` with the member at `tokens` replaced by `leaf(member)`: the member must exist (NOT_FOUND)
 * and every container on the way must be an object or array (VALIDATION_ERROR otherwise).
 */
function rebuild(doc: unknown, tokens: readonly string[], field: string, leaf: (member: unknown) => unknown): unknown {
  const go = (node: unknown, i: number): unknown => {
    if (i === tokens.length) return leaf(node);
    const token = tokens[i]!;
    const at = formatPointer(tokens.slice(0, i + 1));
    const child = childOf(node, token, at, field);
    if (Array.isArray(node)) {
      const copy = node.slice();
      copy[Number(token)] = go(child, i + 1);
      return copy;
    }
    const copy = { ...(node as Record<string, unknown>) };
    setOwn(copy, token, go(child, i + 1));
    return copy;
  };
  return go(doc, 0);
}

const rootMustBeContainer = (value: unknown, field: string) => {
  if (!isContainer(value)) throw pointerInvalid(field, '', `the whole table must be an object or an array, not ${describe(value)}`);
};

/** PUT: replaces the member at `tokens` or creates it in its existing parent (`-`, or the next index, appends to an array). */
export function putAt(doc: unknown, tokens: readonly string[], value: unknown, field: string): Edit {
  if (tokens.length === 0) {
    rootMustBeContainer(value, field);
    return { doc: value, pointer: '', created: false, within: [] };
  }
  const parentTokens = tokens.slice(0, -1);
  const last = tokens[tokens.length - 1]!;
  const parentPointer = formatPointer(parentTokens);
  let pointer = formatPointer(tokens);
  let created = false;
  let resolvedParent: unknown;
  const next = rebuild(doc, parentTokens, field, (parent) => {
    resolvedParent = parent;
    if (Array.isArray(parent)) {
      const i = arrayIndex(parent, last, pointer, field);
      if (i > parent.length) throw pointerInvalid(field, pointer, `index ${i} is past the end of the array at ${parentPointer || '/'} (length ${parent.length}); use - to append`);
      created = i === parent.length;
      pointer = formatPointer([...parentTokens, String(i)]);
      const copy = parent.slice();
      copy[i] = value;
      return copy;
    }
    if (isContainer(parent)) {
      created = !Object.hasOwn(parent, last);
      const copy = { ...parent };
      setOwn(copy, last, value);
      return copy;
    }
    throw pointerInvalid(field, pointer, `${parentPointer || '/'} is ${describe(parent)}, not an object or an array`);
  });
  // A replaced member is all that differs; a created one changes its parent's shape.
  const within = created ? parentTokens : [...parentTokens, Array.isArray(resolvedParent) ? pointer.slice(pointer.lastIndexOf('/') + 1) : last];
  return { doc: next, pointer, created, within };
}

/** POST: appends `data` to the array at `tokens`, or merges the keys of `data` into the object there. */
export function appendAt(doc: unknown, tokens: readonly string[], data: unknown, field: string, dataField: string): Edit {
  const target = formatPointer(tokens);
  let pointer = target;
  const next = rebuild(doc, tokens, field, (member) => {
    if (Array.isArray(member)) {
      pointer = formatPointer([...tokens, String(member.length)]);
      return [...member, data];
    }
    if (isContainer(member)) {
      if (!isContainer(data) || Array.isArray(data)) throw pointerInvalid(dataField, target, `merging into the object at ${target || '/'} needs an object, not ${describe(data)}`);
      const copy = { ...member };
      for (const [k, v] of Object.entries(data)) setOwn(copy, k, v);
      return copy;
    }
    throw pointerInvalid(field, target, `${target || '/'} is ${describe(member)}: only an array (append) or an object (merge) takes data`);
  });
  return { doc: next, pointer, created: false, within: tokens };
}

/** DELETE: removes the member at `tokens` (an array closes the gap); the whole table cannot be removed this way. */
export function removeAt(doc: unknown, tokens: readonly string[], field: string): Edit {
  if (tokens.length === 0) throw pointerInvalid(field, '', 'the whole table cannot be deleted through its data; delete the table');
  const parentTokens = tokens.slice(0, -1);
  const last = tokens[tokens.length - 1]!;
  const pointer = formatPointer(tokens);
  const next = rebuild(doc, parentTokens, field, (parent) => {
    // Resolving the member first gives the same NOT_FOUND / VALIDATION_ERROR answers as a read.
    childOf(parent, last, pointer, field);
    if (Array.isArray(parent)) {
      const i = Number(last);
      return [...parent.slice(0, i), ...parent.slice(i + 1)];
    }
    const copy = { ...(parent as Record<string, unknown>) };
    delete copy[last];
    return copy;
  });
  return { doc: next, pointer, created: false, within: parentTokens };
}
