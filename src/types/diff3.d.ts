/** diff3 0.0.4 ships no types: a merge of `a` and `b` against their common ancestor `o`. */
declare module 'diff3' {
  export interface Diff3Conflict<T> {
    a: T[];
    aIndex: number;
    o: T[];
    oIndex: number;
    b: T[];
    bIndex: number;
  }
  export type Diff3Block<T> = { ok: T[] } | { conflict: Diff3Conflict<T> };
  export default function diff3Merge<T>(a: T[], o: T[], b: T[]): Diff3Block<T>[];
}
