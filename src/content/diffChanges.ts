import { diffLines } from 'diff';
import fastJsonPatch from 'fast-json-patch';
import type { VersionDiff, VersionSide } from './versionDiff.ts';

/** One change between two versions, as PuppyOne's clients list a node diff. */
export interface DiffChange {
  /** json: the JSON Pointer of the value; text and files: '' (the node itself). */
  path: string;
  change_type: 'added' | 'removed' | 'modified';
  old_value: unknown;
  new_value: unknown;
}

/**
 * The changes of a diff as a flat list: for json each operation of the JSON Patch with the value
 * before and after, for text each run of added or removed lines, for binary files one entry
 * with the sizes and hashes (none when identical).
 */
export function diffChanges(from: VersionSide, to: VersionSide, diff: VersionDiff): DiffChange[] {
  if (diff.kind === 'json') {
    const before = JSON.parse(from.bytes.toString('utf8')) as object;
    const valueAt = (pointer: string) => fastJsonPatch.getValueByPointer(before, pointer) as unknown;
    return diff.json_patch.map((op) => {
      const isRemove = op.op === 'remove';
      const isAdd = op.op === 'add';
      return {
        path: op.path,
        change_type: isAdd ? 'added' : isRemove ? 'removed' : 'modified',
        old_value: isAdd ? null : valueAt(op.path),
        new_value: isRemove ? null : 'value' in op ? op.value : null,
      };
    });
  }
  if (diff.kind === 'text') {
    const changes: DiffChange[] = [];
    for (const part of diffLines(from.bytes.toString('utf8'), to.bytes.toString('utf8'))) {
      if (part.added) changes.push({ path: '', change_type: 'added', old_value: null, new_value: part.value });
      else if (part.removed) changes.push({ path: '', change_type: 'removed', old_value: part.value, new_value: null });
    }
    return changes;
  }
  return diff.identical ? [] : [{ path: '', change_type: 'modified', old_value: diff.from, new_value: diff.to }];
}
