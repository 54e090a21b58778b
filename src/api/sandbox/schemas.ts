import { z } from 'zod';
import { endpointLimitsSchema, MAX_COMMAND_BYTES, MAX_STDIN_BYTES, MAX_TIMEOUT_S } from '../../sandbox/limits.ts';
import { createBodyBase, endpointMode, updateBodyBase } from '../shared/nodeBoundRoutes.ts';

const modeDescription = 'read: the folder is mounted read-only and nothing is written back';

export const createEndpointBody = createBodyBase(modeDescription, 'the folder whose subtree commands run over').extend({ limits: endpointLimitsSchema.optional() }).strict();

export const updateEndpointBody = updateBodyBase(modeDescription)
  .extend({ limits: endpointLimitsSchema.optional().describe('replaces the limits the endpoint was given') })
  .strict();

export const execBody = z
  .object({
    // Bytes are counted by the domain (64 KiB); the character bound only keeps parsing cheap.
    command: z.string().min(1, 'must not be empty').max(MAX_COMMAND_BYTES).describe('run as `sh -c` with the folder as the working directory (/work)'),
    timeout_s: z.number().int().min(1).max(MAX_TIMEOUT_S).optional().describe("wall time, seconds (default and maximum: the endpoint's limit)"),
    stdin: z.string().max(MAX_STDIN_BYTES).optional(),
  })
  .strict();

const limits = z.object({ timeout_s: z.number().int(), memory_mb: z.number().int(), max_processes: z.number().int(), disk_mb: z.number().int() });

export const endpointSchema = z.object({
  id: z.string(),
  name: z.string(),
  project_id: z.string(),
  node_id: z.string(),
  path: z.string().describe("the folder's path: the subtree the endpoint's key reaches"),
  mode: endpointMode.describe(modeDescription),
  status: z.enum(['active', 'paused', 'revoked']),
  limits: limits.describe('the limits in force (defaults filled in)'),
  runtime: z.enum(['bwrap', 'just-bash']).describe('what runs the commands on this server'),
  runtime_description: z.string(),
  key_prefix: z.string(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
});

export const endpointWithKey = z.object({ sandbox_endpoint: endpointSchema, key: z.string().describe('shown only in this answer') });

export const execResult = z.object({
  stdout: z.string(),
  stderr: z.string(),
  exit_code: z.number().int(),
  duration_ms: z.number(),
  truncated: z.object({ stdout: z.boolean(), stderr: z.boolean() }).describe('true when the stream passed 1 MiB and was cut'),
  timed_out: z.boolean(),
  changes: z.array(
    z.object({
      path: z.string().describe('project path'),
      action: z.enum(['created', 'modified', 'deleted']),
      type: z.enum(['folder', 'json', 'markdown', 'file']),
      merged: z.boolean().optional().describe('merged three ways with changes made while the command ran'),
    }),
  ),
  skipped: z.array(z.object({ path: z.string().describe('relative to the folder'), reason: z.string() })).describe('entries left in the folder that were not written back'),
  conflicts: z.array(z.object({ path: z.string(), reason: z.string(), regions: z.unknown().optional() })).describe('when not empty, nothing was written'),
  version: z.number().int().nullable().describe('the project version of the write-back commit; null when nothing was written'),
  runtime: z.enum(['bwrap', 'just-bash']),
  timings: z.object({
    materialize_ms: z.number(),
    run_ms: z.number(),
    write_back_ms: z.number(),
    warm: z.boolean().describe('the command ran in a sandbox made ahead of it (its folder and processes were ready)'),
  }),
});
