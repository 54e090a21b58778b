import { z } from 'zod';

const id = z.string().min(1).max(100);

export const agentParams = z.object({ agent_id: id });

export const createBody = z.object({ agent_id: id.describe('the agent whose draft this is (at most one workspace per agent)') }).strict();

export const completeBody = z
  .object({ message: z.string().trim().min(1, 'must not be empty').max(1000).optional().describe('the commit message (default: one naming the agent)') })
  .strict();

const draftType = z.enum(['markdown', 'json', 'file', 'folder']);

export const workspaceSchema = z.object({
  agent_id: z.string(),
  project_id: z.string(),
  base_version: z.number().int().describe('the project version when the workspace was opened'),
  roots: z.array(z.string()).describe("the agent's read_write access paths at open ('' = the whole project): drafts are written beneath them"),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const textDiff = z.object({ kind: z.literal('text'), unified_diff: z.string(), added_lines: z.number().int(), removed_lines: z.number().int() });
const jsonDiff = z.object({
  kind: z.literal('json'),
  json_patch: z.array(z.record(z.string(), z.unknown())).describe('RFC 6902 operations from the base to the draft'),
  unified_diff: z.string(),
  added_lines: z.number().int(),
  removed_lines: z.number().int(),
});
const sum = z.object({ size: z.number().int(), sha256: z.string() });
const binaryDiff = z.object({ kind: z.literal('binary'), from: sum, to: sum, identical: z.boolean() });

export const statusSchema = workspaceSchema.extend({
  changes: z.array(
    z.object({
      path: z.string(),
      action: z.enum(['created', 'updated', 'deleted']),
      type: draftType,
      base_version: z.number().int().nullable().describe('the live version the draft of this path started from (null: nothing was there)'),
      live_version: z.number().int().nullable().describe("the live node's version at this path now"),
      diff: z.union([textDiff, jsonDiff, binaryDiff]).nullable().describe('the draft against its base; null for folders'),
    }),
  ),
});

export const completeResult = z.object({
  version: z.number().int().nullable().describe('the project version of the commit; null when the workspace changed nothing'),
  changes: z.array(z.object({ path: z.string(), action: z.enum(['created', 'updated', 'deleted']), type: draftType, merged: z.boolean() })),
});
