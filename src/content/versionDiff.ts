import { createTwoFilesPatch, diffLines } from 'diff';
import fastJsonPatch from 'fast-json-patch';
import { createHash } from 'node:crypto';
import type { NodeType } from './types.ts';

export interface VersionSide {
  version: number;
  type: NodeType;
  bytes: Buffer;
}

export type VersionDiff =
  | { kind: 'text'; unified_diff: string; added_lines: number; removed_lines: number }
  | {
      kind: 'json';
      json_patch: fastJsonPatch.Operation[];
      unified_diff: string;
      added_lines: number;
      removed_lines: number;
    }
  | {
      kind: 'binary';
      from: { size: number; sha256: string };
      to: { size: number; sha256: string };
      identical: boolean;
    };

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Text we can diff line by line: valid UTF-8 without NUL bytes. */
function asText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  const text = bytes.toString('utf8');
  return Buffer.byteLength(text) === bytes.length && !text.includes('\uFFFD') ? text : null;
}

function lineCounts(a: string, b: string): { added_lines: number; removed_lines: number } {
  let added = 0;
  let removed = 0;
  for (const part of diffLines(a, b)) {
    if (part.added) added += part.count ?? 0;
    if (part.removed) removed += part.count ?? 0;
  }
  return { added_lines: added, removed_lines: removed };
}

/**
 * Compares two versions of a node: a unified diff for text, an RFC 6902 JSON Patch (plus the
 * unified diff of the stored pretty-printed form) for json, sizes and hashes for binary files.
 */
export function diffVersions(path: string, from: VersionSide, to: VersionSide): VersionDiff {
  const label = (v: VersionSide) => `${path}@v${v.version}`;
  if (from.type === 'json' && to.type === 'json') {
    const a = from.bytes.toString('utf8');
    const b = to.bytes.toString('utf8');
    return {
      kind: 'json',
      json_patch: fastJsonPatch.compare(JSON.parse(a) as object, JSON.parse(b) as object),
      unified_diff: createTwoFilesPatch(label(from), label(to), a, b),
      ...lineCounts(a, b),
    };
  }
  const a = asText(from.bytes);
  const b = asText(to.bytes);
  if (a !== null && b !== null) {
    return { kind: 'text', unified_diff: createTwoFilesPatch(label(from), label(to), a, b), ...lineCounts(a, b) };
  }
  const fromSum = { size: from.bytes.length, sha256: sha256(from.bytes) };
  const toSum = { size: to.bytes.length, sha256: sha256(to.bytes) };
  return { kind: 'binary', from: fromSum, to: toSum, identical: fromSum.sha256 === toSum.sha256 };
}
