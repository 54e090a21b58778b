import { z } from 'zod';
import type { AuditLogEntry, NodeInfo, TrashItem, VersionInfo } from '../content/contentStore.ts';
import { nodeTypeSchema } from './node.ts';

// A node itself is presented by node.ts (one presenter for both surfaces).

/** Version records carry the fields of both shapes of spec 2.3 plus where the version came from. */
export function presentVersion(v: VersionInfo) {
  return {
    version: v.version,
    actor_type: v.actorType,
    actor_id: v.actorId,
    author: v.author,
    authored_by: v.commitAuthor,
    created_at: v.createdAt,
    message: v.message,
    size: v.size,
    path: v.path,
    type: v.type,
    operation: v.operation,
    commit_id: v.commitId,
    project_version: v.projectVersion,
    content_hash: v.blobId,
    // PuppyOne's names for actor_type, actor_id and size
    operator_type: v.actorType,
    operator_id: v.actorId,
    size_bytes: v.size,
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
    authored_by: e.commitAuthor,
    node_id: e.nodeId,
    path: e.path,
    timestamp: e.timestamp,
    details: e.details,
    // PuppyOne's names for actor_type, actor_id and timestamp
    operator_type: e.actorType,
    operator_id: e.actorId,
    created_at: e.timestamp,
  };
}

/**
 * The readable content of a node version: parsed JSON, Markdown text, or base64 for files.
 * Content is `content` on every surface (README "API conventions"); Markdown also keeps the
 * path surface's `content_text` (spec 2.2) for the clients that read it.
 */
export function presentContent(type: NodeInfo['type'], bytes: Buffer): { content?: unknown; content_text?: string; content_base64?: string } {
  if (type === 'json') return { content: JSON.parse(bytes.toString('utf8')) };
  if (type === 'markdown') {
    const text = bytes.toString('utf8');
    return { content: text, content_text: text };
  }
  return { content_base64: bytes.toString('base64') };
}

// What the presenters above answer, for the response schemas of the OpenAPI document.

export const versionSchema = z.object({
  version: z.number().int(),
  actor_type: z.enum(['user', 'agent', 'sync']),
  actor_id: z.string(),
  author: z.string().describe('who made the version: the user email, or agent:<name>'),
  authored_by: z.string().nullable().describe('the author a pushed git commit names, when it is not the actor who pushed it'),
  created_at: z.string(),
  message: z.string().nullable(),
  size: z.number().int(),
  path: z.string(),
  type: nodeTypeSchema,
  operation: z.enum(['create', 'update', 'move', 'trash', 'restore', 'rollback', 'delete']),
  commit_id: z.string(),
  project_version: z.number().int(),
  content_hash: z.string().nullable(),
  operator_type: z.enum(['user', 'agent', 'sync']).describe('actor_type, by the name PuppyOne clients read'),
  operator_id: z.string().describe('actor_id, by the name PuppyOne clients read'),
  size_bytes: z.number().int().describe('size, by the name PuppyOne clients read'),
});

/** `presentContent`: json → content, markdown → content and content_text, file → content_base64. */
export const contentFieldsSchema = {
  content: z.unknown().optional(),
  content_text: z.string().optional(),
  content_base64: z.string().optional(),
};

export const trashItemSchema = z.object({
  id: z.string(),
  trash_path: z.string(),
  original_path: z.string().nullable(),
  name: z.string(),
  type: nodeTypeSchema,
  deleted_at: z.string().nullable(),
  deleted_by: z.string().nullable(),
});

export const auditLogSchema = z.object({
  id: z.number().int(),
  action: z.string(),
  actor_type: z.enum(['user', 'agent', 'sync']),
  actor_id: z.string(),
  author: z.string(),
  authored_by: z.string().nullable().describe('the author a pushed git commit names, when it is not the actor'),
  node_id: z.string().describe("'' for a push"),
  path: z.string(),
  timestamp: z.string(),
  details: z.record(z.string(), z.unknown()),
  operator_type: z.enum(['user', 'agent', 'sync']).describe('actor_type, by the name PuppyOne clients read'),
  operator_id: z.string().describe('actor_id, by the name PuppyOne clients read'),
  created_at: z.string().describe('timestamp, by the name PuppyOne clients read'),
});
