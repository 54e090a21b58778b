import { z } from 'zod';
import { nodeSchema } from '../../presenters/node.ts';

const projectId = z.string().min(1).max(100);
const nodeId = z.string().min(1).max(200);

/** Without project_id (PuppyOne's checkout) the nodes' project is that of the first node, and the answer is PuppyOne's list of working copies. */
export const checkoutBody = z.object({ project_id: projectId.optional(), node_ids: z.array(nodeId).min(1, 'node_ids must not be empty').max(1000) });
const nodeType = z.enum(['json', 'markdown', 'file']);
const mutation = z.object({
  node_id: nodeId,
  content: z.unknown().refine((v) => v !== undefined, 'content is required'),
  message: z.string().max(10_000).optional(),
  base_version: z.number().int().min(1).optional(),
});
/**
 * `{project_id, mutations}`, or PuppyOne's one node `{node_id, content, base_version, node_type?,
 * message?}` (its project is the node's; its answer is PuppyOne's `{node_id, status, version}`).
 * `node_type`, when sent, must be the node's type (checked by the route).
 */
export const commitBody = z
  .object({
    project_id: projectId.optional(),
    mutations: z.array(mutation).min(1, 'mutations must not be empty').max(10_000).optional(),
    node_id: nodeId.optional(),
    content: z.unknown().optional(),
    base_version: z.number().int().min(1).optional(),
    node_type: nodeType.optional(),
    message: z.string().max(10_000).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.mutations !== undefined) {
      for (const k of ['node_id', 'content', 'base_version', 'node_type', 'message'] as const) {
        if (b[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'give mutations, or one node (node_id, content…), not both' });
      }
      if (b.project_id === undefined) ctx.addIssue({ code: 'custom', path: ['project_id'], message: 'project_id is required with mutations' });
      return;
    }
    if (b.node_id === undefined) ctx.addIssue({ code: 'custom', path: ['mutations'], message: 'mutations (or node_id and content for one node) is required' });
    if (b.content === undefined) ctx.addIssue({ code: 'custom', path: ['content'], message: 'content is required' });
  })
  .transform((b) => ({
    project_id: b.project_id,
    /** PuppyOne's one-node commit. */
    single: b.mutations === undefined ? { node_type: b.node_type } : null,
    mutations: b.mutations ?? [{ node_id: b.node_id!, content: b.content, base_version: b.base_version, message: b.message }],
  }));

export const checkoutResult = z.union([
  z.object({
    project_id: z.string(),
    nodes: z.array(nodeSchema.extend({ base_version: z.number().int().describe('send it back as the base of a commit') })),
  }),
  z
    .array(
      z.object({
        node_id: z.string(),
        node_type: z.enum(['folder', 'json', 'markdown', 'file']),
        base_version: z.number().int(),
        content: z.unknown().describe('json: the value; markdown: the text; files: base64'),
        content_json: z.unknown().describe('json: the value; null otherwise'),
        content_hash: z.string().nullable(),
      }),
    )
    .describe('without project_id in the request: PuppyOne\'s working copies'),
]);

/** PuppyOne's answer to a one-node commit. */
export const singleCommitResult = z.object({
  node_id: z.string(),
  status: z.enum(['clean', 'merged']).describe('merged: three-way merged with changes newer than base_version (a conflict is 409)'),
  version: z.number().int().describe("the node's version now"),
  final_content: z.unknown().describe('the content written (json: the value; markdown: the text; files: base64)'),
  strategy: z.enum(['direct', 'json_key', 'line_diff3', 'binary']),
  project_version: z.number().int().nullable(),
  commit_id: z.string().nullable(),
});

export const commitResult = z.object({
  changed: z.boolean(),
  merged: z.boolean().describe('whether any node was merged with changes newer than its base'),
  project_version: z.number().int().nullable(),
  commit_id: z.string().nullable(),
  nodes: z.array(nodeSchema.extend({ base_version: z.number().int().nullable(), merged: z.boolean() })),
});

export const mergeBody = z.object({
  project_id: projectId,
  node_id: nodeId,
  content: z.unknown().refine((v) => v !== undefined, 'content is required'),
  base_version: z.number().int().min(1).describe('the version the content was written against'),
});

export const mergeResult = z.object({
  node: nodeSchema,
  base_version: z.number().int(),
  current_version: z.number().int(),
  clean: z.boolean(),
  merged: z.unknown().describe('the merged content when clean (a JSON value, Markdown text, base64 for files); null otherwise'),
  merged_text: z.string().nullable().describe('the merge as text, with git-style conflict markers where it is not clean (json: in its stored form); null for files'),
  conflicts: z.array(z.record(z.string(), z.unknown())).describe('the conflicting regions (text) or JSON Pointers with the three values (json)'),
});

/** PuppyOne's project history: the first `limit` commits after `since_version`. */
export const projectHistoryParams = z.object({ projectId });
export const projectHistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  since_version: z.coerce.number().int().min(0).default(0),
});
