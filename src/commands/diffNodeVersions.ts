import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import { diffChanges, type DiffChange } from '../content/diffChanges.ts';
import { diffVersions, type VersionDiff } from '../content/versionDiff.ts';

/** Two versions of a node compared: a unified diff for text, a JSON Patch for json, sizes and hashes for binary files. */
export async function diffNodeVersions(
  d: { content: Pick<ContentStore, 'versionContent'> },
  node: NodeInfo,
  v1: number,
  v2: number,
): Promise<{ node: NodeInfo; v1: number; v2: number; diff: VersionDiff; changes: DiffChange[] }> {
  const [a, b] = await Promise.all([d.content.versionContent(node.projectId, { id: node.id }, v1), d.content.versionContent(node.projectId, { id: node.id }, v2)]);
  const from = { version: v1, type: a.version.type, bytes: a.bytes };
  const to = { version: v2, type: b.version.type, bytes: b.bytes };
  const diff = diffVersions(node.path, from, to);
  return { node, v1, v2, diff, changes: diffChanges(from, to, diff) };
}
