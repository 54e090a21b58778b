import type { AuditLogEntry, NodeInfo, TrashItem, TreeNode, VersionInfo } from '../../content/contentStore.ts';

/** A node's metadata as every content route shows it (snake_case, ISO times). */
export function presentEntry(n: NodeInfo) {
  return {
    id: n.id,
    name: n.name,
    path: n.path,
    type: n.type,
    size: n.size,
    content_hash: n.contentHash,
    mime_type: n.mimeType,
    children_count: n.type === 'folder' ? n.childrenCount ?? 0 : null,
    version: n.version,
    created_at: n.createdAt,
    updated_at: n.updatedAt,
  };
}

export function presentTree(n: TreeNode): ReturnType<typeof presentEntry> & { children?: unknown[] | null } {
  const out: ReturnType<typeof presentEntry> & { children?: unknown[] | null } = presentEntry(n);
  // A folder whose children were not loaded (max_depth reached) has no `children` key; its children_count still tells how many.
  if (Array.isArray(n.children)) out.children = n.children.map(presentTree);
  else if (n.type !== 'folder') out.children = null;
  return out;
}

/** Version records carry the fields of both shapes of spec 2.3 plus where the version came from. */
export function presentVersion(v: VersionInfo) {
  return {
    version: v.version,
    actor_type: v.actorType,
    actor_id: v.actorId,
    author: v.author,
    created_at: v.createdAt,
    message: v.message,
    size: v.size,
    path: v.path,
    type: v.type,
    operation: v.operation,
    commit_id: v.commitId,
    project_version: v.projectVersion,
    content_hash: v.blobId,
  };
}

export function presentTrashItem(t: TrashItem) {
  return {
    id: t.id,
    trash_path: t.trashPath,
    original_path: t.originalPath,
    name: t.name,
    type: t.type,
    deleted_at: t.deletedAt,
    deleted_by: t.deletedBy,
  };
}

export function presentAuditLog(e: AuditLogEntry) {
  return {
    id: e.id,
    action: e.action,
    actor_type: e.actorType,
    actor_id: e.actorId,
    author: e.author,
    node_id: e.nodeId,
    path: e.path,
    timestamp: e.timestamp,
    details: e.details,
  };
}

/** The readable content of a node version: parsed JSON, Markdown text, or base64 for files. */
export function presentContent(type: NodeInfo['type'], bytes: Buffer): { content?: unknown; content_text?: string; content_base64?: string } {
  if (type === 'json') return { content: JSON.parse(bytes.toString('utf8')) };
  if (type === 'markdown') return { content_text: bytes.toString('utf8') };
  return { content_base64: bytes.toString('base64') };
}
