import { visit } from 'jsonc-parser';
import { formatPointer } from '../../util/jsonPointer.ts';

/** One value of a JSON document and the line (1-based) where it starts. */
export interface KeyLine {
  /** RFC 6901 pointer ('' = the document itself). */
  pointer: string;
  line: number;
}

/**
 * Where each leaf of a JSON document lies: every scalar, and every empty object or array, with its
 * pointer and line. Blame per key path takes each leaf's line's origin (the store writes JSON one
 * member per line, so a line is a member). Null when the text is not strict JSON.
 */
export function jsonKeyLines(text: string, max: number): { keys: KeyLine[]; truncated: boolean } | null {
  const keys: KeyLine[] = [];
  let truncated = false;
  let broken = false;
  // Per open container: whether a member was seen, its pointer and line (empty ones are leaves).
  const open: { members: number; pointer: string; line: number }[] = [];
  const add = (pointer: string, line: number) => {
    if (keys.length >= max) truncated = true;
    else keys.push({ pointer, line: line + 1 });
  };
  const member = () => {
    const top = open[open.length - 1];
    if (top) top.members++;
  };
  const begin = (_o: number, _l: number, line: number, _c: number, path: () => (string | number)[]) => {
    member();
    open.push({ members: 0, pointer: toPointer(path()), line });
  };
  const end = () => {
    const c = open.pop();
    if (c && c.members === 0) add(c.pointer, c.line);
  };
  visit(
    text,
    {
      onObjectBegin: begin,
      onObjectEnd: end,
      onArrayBegin: begin,
      onArrayEnd: end,
      onLiteralValue: (_v, _o, _l, line, _c, path) => {
        member();
        add(toPointer(path()), line);
      },
      onError: () => {
        broken = true;
      },
      onComment: () => {
        broken = true;
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
  return broken ? null : { keys, truncated };
}

const toPointer = (path: (string | number)[]): string => formatPointer(path.map(String));
