import { z } from 'zod';

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
