import { z } from 'zod';
import { nodeSchema } from '../../presenters/node.ts';

const projectId = z.string().min(1).max(100);
const nodeId = z.string().min(1).max(200);

export const checkoutBody = z.object({ project_id: projectId, node_ids: z.array(nodeId).min(1, 'node_ids must not be empty').max(1000) });
export const commitBody = z.object({
  project_id: projectId,
  mutations: z
    .array(
      z.object({
        node_id: nodeId,
        content: z.unknown().refine((v) => v !== undefined, 'content is required'),
        message: z.string().max(10_000).optional(),
        base_version: z.number().int().min(1).optional(),
      }),
    )
    .min(1, 'mutations must not be empty')
    .max(10_000),
});

export const checkoutResult = z.object({
  project_id: z.string(),
  nodes: z.array(nodeSchema.extend({ base_version: z.number().int().describe('send it back as the base of a commit') })),
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
