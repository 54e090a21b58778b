import type { IndexStore, NodeRow, VersionRow } from '../indexStore.ts';
import type { ReindexReport } from '../types.ts';

/** The index of a project before and after a rebuild from git, and what differs between them. */

export interface Snapshot {
  nodes: Map<string, NodeRow>;
  versions: Map<string, VersionRow[]>;
  versionCount: number;
}

export function snapshot(index: IndexStore, projectId: string): Snapshot {
  const nodes = new Map(index.allNodes(projectId).map((n) => [n.id, n] as const));
  const versions = new Map<string, VersionRow[]>();
  let versionCount = 0;
  for (const v of index.allVersions(projectId)) {
    versions.set(v.node_id, [...(versions.get(v.node_id) ?? []), v]);
    versionCount++;
  }
  return { nodes, versions, versionCount };
}

const NODE_FIELDS = ['path', 'parent_id', 'type', 'name', 'content_hash', 'size', 'state', 'version', 'original_path', 'deleted_at', 'deleted_by', 'created_at'] as const;
const VERSION_FIELDS = ['commit_id', 'project_version', 'blob_id', 'type', 'path', 'parent_id', 'operation', 'actor_type', 'actor_id', 'size'] as const;

export function compare(before: Snapshot, after: Snapshot): Pick<ReindexReport, 'missingNodes' | 'extraNodes' | 'differences'> {
  const missingNodes: string[] = [];
  const extraNodes: string[] = [];
  const differences: string[] = [];
  const note = (s: string) => {
    if (differences.length < 500) differences.push(s);
  };
  for (const [id, b] of before.nodes) {
    const a = after.nodes.get(id);
    if (!a) {
      missingNodes.push(id);
      note(`node ${id} (${b.path}) is not in git`);
      continue;
    }
    for (const f of NODE_FIELDS) if (a[f] !== b[f]) note(`node ${id} ${f}: index ${JSON.stringify(b[f])}, git ${JSON.stringify(a[f])}`);
    const bv = before.versions.get(id) ?? [];
    const av = after.versions.get(id) ?? [];
    if (bv.length !== av.length) note(`node ${id} has ${bv.length} versions in the index, ${av.length} in git`);
    for (let i = 0; i < Math.min(bv.length, av.length); i++) {
      for (const f of VERSION_FIELDS) {
        if (av[i][f] !== bv[i][f]) note(`node ${id} v${bv[i].version} ${f}: index ${JSON.stringify(bv[i][f])}, git ${JSON.stringify(av[i][f])}`);
      }
    }
  }
  for (const [id, a] of after.nodes) {
    if (!before.nodes.has(id)) {
      extraNodes.push(id);
      note(`node ${id} (${a.path}) was missing from the index`);
    }
  }
  return { missingNodes, extraNodes, differences };
}
