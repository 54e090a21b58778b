import { z } from 'zod';
import { DomainError } from '../../domain/errors.ts';
import { defineToolType } from '../toolType.ts';

/**
 * Registered so that the registry is complete and its schema is published; running commands
 * over a subtree needs the sandbox runtime, which the sandbox issue adds.
 */
export const shellTool = defineToolType({
  type: 'shell',
  summary: "Runs a shell command over the tool's subtree in a sandbox (needs the sandbox runtime).",
  binds: 'folder',
  config: z.object({ timeout_ms: z.number().int().min(100).max(600_000).optional(), writable: z.boolean().optional() }).strict(),
  input: z.object({ command: z.string().min(1).max(10_000).describe('a bash command line, run with the tool node as the working folder') }).strict(),
  async run(call) {
    call.grant('content:read');
    throw new DomainError('VALIDATION_ERROR', 'The shell tool needs the sandbox runtime, which is not installed on this server yet.', [
      { field: 'type', message: 'shell tools cannot run until the sandbox runtime is installed' },
    ]);
  },
});
