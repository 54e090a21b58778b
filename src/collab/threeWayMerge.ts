import type { NodeType } from '../content/contentStore.ts';
import { mergeJson, type JsonConflict } from './jsonMerge.ts';
import { mergeText, type TextConflict } from './textMerge.ts';

export interface MergeSides {
  type: NodeType;
  /** Decoded content: a JSON value, markdown text, or bytes for files. */
  base: unknown;
  current: unknown;
  incoming: unknown;
  baseVersion: number;
  currentVersion: number;
}

export type NodeMerge =
  | { clean: true; merged: unknown }
  | { clean: false; kind: 'text'; conflicts: TextConflict[]; marked: string }
  | { clean: false; kind: 'json'; conflicts: JsonConflict[] }
  | { clean: false; kind: 'binary'; conflicts: { reason: string }[] }
  | { clean: false; kind: 'type'; conflicts: { reason: string }[] };

/** Merges by node type: markdown line by line, json key by key, files only when one side is unchanged. */
export function mergeNode(m: MergeSides): NodeMerge {
  if (m.type === 'markdown') {
    const r = mergeText(m.base as string, m.current as string, m.incoming as string, {
      base: `base (version ${m.baseVersion})`,
      current: `current (version ${m.currentVersion})`,
      incoming: 'incoming',
    });
    return r.clean ? r : { clean: false, kind: 'text', conflicts: r.conflicts, marked: r.marked };
  }
  if (m.type === 'json') {
    const r = mergeJson(m.base, m.current, m.incoming);
    return r.clean ? r : { clean: false, kind: 'json', conflicts: r.conflicts };
  }
  const [base, current, incoming] = [m.base, m.current, m.incoming].map((b) => Buffer.from(b as Uint8Array));
  if (current.equals(incoming) || base.equals(incoming)) return { clean: true, merged: current };
  if (base.equals(current)) return { clean: true, merged: incoming };
  return { clean: false, kind: 'binary', conflicts: [{ reason: 'both sides changed the file bytes' }] };
}
