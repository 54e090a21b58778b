import { z } from 'zod';
import { nodeSchema } from '../../presenters/node.ts';

// Requests of the history and snapshot routes by node id (/nodes/{id}/… and their /collab twins).

const id = z.string().min(1).max(200);
const projectId = z.string().min(1).max(100);
const intFromPath = z.coerce.number().int().min(1);
const message = z.string().max(10_000).optional();

export const nodeParams = z.object({ nodeId: id });
export const versionParams = z.object({ nodeId: id, version: intFromPath });
export const diffParams = z.object({ nodeId: id, v1: intFromPath, v2: intFromPath });
/** A snapshot is named by its commit id, or by its integer `id` (the project version, as PuppyOne's clients name it). */
export const snapshotParams = z.object({
  nodeId: id,
  snapshotId: z.string().regex(/^([0-9a-f]{40}|[1-9][0-9]{0,15})$/, 'snapshot_id is a commit id (40 hex digits) or a snapshot id (its project version)'),
});

/** `project_id` may accompany any id route; when sent it must be the node's project. */
export const optionalProjectQuery = z.object({ project_id: projectId.optional() });
export const versionsQuery = optionalProjectQuery.extend({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  since_version: z.coerce.number().int().min(0).optional(),
});
export const snapshotsQuery = optionalProjectQuery.extend({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  before: z.coerce.number().int().min(1).optional(),
});
export const rollbackBody = z.object({ message }).optional();

// Answers of the snapshot routes (nodeSnapshots.ts); the history answers are src/presenters/history.ts and changes.ts.

export const snapshotSchema = z.object({
  id: z.number().int().describe('the project version: an integer id for the snapshot, as PuppyOne clients name it'),
  snapshot_id: z.string().describe('the commit id'),
  project_version: z.number().int(),
  created_at: z.string(),
  actor_type: z.string(),
  actor_id: z.string(),
  author: z.string(),
  message: z.string(),
  files_count: z.number().int(),
  changed_count: z.number().int(),
});
export const snapshotList = z.object({ folder_id: z.string(), path: z.string(), snapshots: z.array(snapshotSchema), total: z.number().int() });
export const snapshotRollback = z.object({
  folder_id: z.string(),
  snapshot_id: z.string(),
  changed: z.boolean(),
  project_version: z.number().int().nullable(),
  commit_id: z.string().nullable(),
  nodes: z.array(nodeSchema),
});
