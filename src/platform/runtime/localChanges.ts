import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { decodeContent } from '../../content/contentStore.ts';
import type { ChangeEntry } from '../../events/changelog.ts';
import type { LocalChange } from './connector.ts';
import { inFolder, relativeTo } from './itemPaths.ts';
import type { ItemRow } from './itemStore.ts';

export interface LocalScope {
  content: ContentStore;
  projectId: string;
  syncId: string;
  folder: string;
  rows: Map<string, ItemRow>;
}

/** A local change with the node it came from (for recording the push outcome). */
export interface PendingChange {
  change: LocalChange;
  /** The node as it is now (null for a delete of a node that is gone). */
  node: NodeInfo | null;
  /** Project path to name it by in the run's lists. */
  path: string;
}

/**
 * What changed here, since the last run, in the nodes of the sync's folder: the nodes that
 * changelog `entries` touched (by anyone but this sync), compared with the item map. A synced
 * node whose content hash differs from the one recorded is an update; one trashed, deleted or
 * moved out of the folder a delete; a new file in the folder a create. Touching a folder (a
 * move or trash of a whole subtree) makes every synced node a candidate.
 */
export async function localChanges(scope: LocalScope, entries: ChangeEntry[]): Promise<PendingChange[]> {
  const { content, projectId, syncId, folder, rows } = scope;
  const owner = new Map<string, string>();
  for (const r of rows.values()) if (r.nodeId) owner.set(r.nodeId, r.sourceId);
  const candidates = new Set<string>();
  let folderTouched = false;
  for (const e of entries) {
    if (e.actor.type === 'sync' && e.actor.id === syncId) continue;
    const relevant = owner.has(e.nodeId) || inFolder(folder, e.path) || (e.oldPath !== null && inFolder(folder, e.oldPath));
    if (!relevant) continue;
    if (e.nodeType === 'folder') folderTouched = true;
    else candidates.add(e.nodeId);
  }
  if (folderTouched) {
    for (const id of owner.keys()) candidates.add(id);
    for (const n of filesUnder(content, projectId, folder)) candidates.add(n.id);
  }
  const out: PendingChange[] = [];
  for (const id of candidates) {
    const found = content.findById(id);
    const node = found && found.projectId === projectId ? found : null;
    const live = node !== null && node.state === 'active' && node.type !== 'folder' && inFolder(folder, node.path);
    const sourceId = owner.get(id);
    if (sourceId !== undefined) {
      const row = rows.get(sourceId)!;
      const known = { sourceId, path: row.path, sourceVersion: row.sourceVersion, meta: row.meta };
      if (!live) {
        out.push({ change: { kind: 'delete', sourceId, known }, node, path: row.nodePath });
        continue;
      }
      // Unchanged content at the path the sync gave it: nothing to send. A move alone is a change.
      if (node.contentHash === row.contentHash && node.path === row.nodePath) continue;
      out.push({
        change: {
          kind: 'update',
          sourceId,
          known,
          path: relativeTo(folder, node.path),
          type: node.type as 'json' | 'markdown' | 'file',
          content: await valueOf(content, projectId, node),
          previous: row.contentHash ? await blobValue(content, projectId, node.type, row.contentHash) : null,
        },
        node,
        path: node.path,
      });
    } else if (live) {
      out.push({
        change: { kind: 'create', path: relativeTo(folder, node.path), type: node.type as 'json' | 'markdown' | 'file', content: await valueOf(content, projectId, node) },
        node,
        path: node.path,
      });
    }
  }
  return out;
}

async function valueOf(content: ContentStore, projectId: string, node: NodeInfo): Promise<unknown> {
  return (await content.readValue(projectId, { id: node.id })).value;
}

/** The content a node had when the sync last wrote it (its blob), or null when it cannot be read. */
async function blobValue(content: ContentStore, projectId: string, type: NodeInfo['type'], oid: string): Promise<unknown> {
  try {
    const blob = await content.openBlob(projectId, oid);
    const chunks: Buffer[] = [];
    if (blob.size > 0) for await (const c of blob.stream(0, blob.size - 1)) chunks.push(c as Buffer);
    return decodeContent(type, Buffer.concat(chunks));
  } catch {
    return null;
  }
}

function filesUnder(content: ContentStore, projectId: string, folder: string): NodeInfo[] {
  const out: NodeInfo[] = [];
  const walk = (path: string) => {
    let children: NodeInfo[];
    try {
      children = content.listChildren(projectId, path);
    } catch {
      return;
    }
    for (const c of children) {
      if (c.type === 'folder') walk(c.path);
      else out.push(c);
    }
  };
  walk(folder);
  return out;
}
