import type { ContentStore, NodeType, WritableNodeType } from '../../content/contentStore.ts';
import { diffVersions, type VersionDiff, type VersionSide } from '../../content/versionDiff.ts';
import type { DraftRow } from './workspaceStore.ts';

/** One drafted path as a reviewer sees it: what it was based on, what is live now, the diff. */
export interface DraftChange {
  path: string;
  action: 'created' | 'updated' | 'deleted';
  type: WritableNodeType | 'folder';
  /** The live version the draft started from (null: nothing was there). */
  base_version: number | null;
  /** The live node's version at the path now (null: none). */
  live_version: number | null;
  /**
   * The draft against its base (versionDiff's shapes): a unified diff for text, an RFC 6902 JSON
   * Patch (and the unified diff of the stored form) for json, sizes and hashes for binary files;
   * null for folders and when the base version can no longer be read.
   */
  diff: VersionDiff | null;
}

/** The draft's changes against their bases, by path. */
export async function draftChanges(content: ContentStore, projectId: string, rows: readonly DraftRow[]): Promise<DraftChange[]> {
  const out: DraftChange[] = [];
  for (const row of rows) {
    const live = content.findByPath(projectId, row.path);
    const action = row.action === 'deleted' ? 'deleted' : row.baseNodeId === null ? 'created' : 'updated';
    out.push({
      path: row.path,
      action,
      type: row.type,
      base_version: row.baseVersion,
      live_version: live && live.state === 'active' ? live.version : null,
      diff: row.type === 'folder' ? null : await diffOf(content, projectId, row),
    });
  }
  return out;
}

async function diffOf(content: ContentStore, projectId: string, row: DraftRow): Promise<VersionDiff | null> {
  let base: VersionSide | null = null;
  if (row.baseNodeId !== null && row.baseVersion !== null) {
    try {
      const v = await content.versionContent(projectId, { id: row.baseNodeId }, row.baseVersion);
      base = { version: row.baseVersion, type: v.version.type, bytes: v.bytes };
    } catch {
      // The node was deleted for good since (or its base was a folder): nothing to compare with.
      if (row.action === 'deleted') return null;
    }
  }
  const draft: VersionSide | null = row.action === 'written' ? { version: (row.baseVersion ?? 0) + 1, type: row.type as NodeType, bytes: row.content ?? Buffer.alloc(0) } : null;
  if (base && draft) return diffVersions(row.path, base, draft);
  if (draft) return oneSided(row.path, { version: 0, type: 'file', bytes: Buffer.alloc(0) }, draft, draft);
  if (base) return oneSided(row.path, base, { version: base.version + 1, type: 'file', bytes: Buffer.alloc(0) }, base);
  return null;
}

/**
 * A created or deleted file: the text diff against nothing, and for json the patch that adds or
 * removes the whole document (RFC 6902 allows the root pointer "").
 */
function oneSided(path: string, from: VersionSide, to: VersionSide, present: VersionSide): VersionDiff {
  // The absent side is typed `file`: the sides then compare as text (or binary), never as json.
  const text = diffVersions(path, from, to);
  if (present.type !== 'json' || text.kind !== 'text') return text;
  const value = JSON.parse(present.bytes.toString('utf8')) as unknown;
  const op = present === to ? { op: 'add' as const, path: '', value } : { op: 'remove' as const, path: '' };
  return { kind: 'json', json_patch: [op], unified_diff: text.unified_diff, added_lines: text.added_lines, removed_lines: text.removed_lines };
}
