import { z } from 'zod';
import { effectiveLimits, endpointLimitsSchema, MAX_COMMAND_BYTES, MAX_STDIN_BYTES } from '../../sandbox/limits.ts';
import { invalidField } from '../../errors/domainError.ts';
import { defineToolType } from '../toolType.ts';

/**
 * Runs a command over the tool's folder in the sandbox runtime, the same one sandbox endpoints
 * and agents use. A `writable` tool writes what the command changed back as one version by the
 * caller; otherwise the folder is mounted read-only.
 */
export const shellTool = defineToolType({
  type: 'shell',
  summary: "Runs a shell command (sh -c) over the tool's folder in a sandbox: no network, limited time, memory and output; with `writable`, changed files are written back as one version.",
  binds: 'folder',
  config: z
    .object({
      writable: z.boolean().optional().describe('write what the command changed back (needs write access); default false: the folder is read-only'),
      limits: endpointLimitsSchema.optional(),
    })
    .strict(),
  input: z
    .object({
      command: z.string().min(1).max(MAX_COMMAND_BYTES).describe("a shell command line, run with the tool's folder as the working directory"),
      stdin: z.string().max(MAX_STDIN_BYTES).optional(),
      timeout_s: z.number().int().min(1).max(300).optional().describe("wall time, seconds (at most the tool's limit, default 30)"),
    })
    .strict(),
  async run(call) {
    const limits = effectiveLimits(call.config.limits);
    const timeoutS = call.args.timeout_s ?? limits.timeout_s;
    if (timeoutS > limits.timeout_s) throw invalidField('arguments.timeout_s', `this tool allows at most ${limits.timeout_s} seconds`);
    if (Buffer.byteLength(call.args.command) > MAX_COMMAND_BYTES) throw invalidField('arguments.command', `the command is longer than ${MAX_COMMAND_BYTES} bytes`);
    const grant = await call.grant(call.config.writable ? 'content:write' : 'content:read');
    const r = await call.env.sandbox.exec({
      grant,
      scope: call.root,
      mode: call.config.writable ? 'read_write' : 'read',
      command: call.args.command,
      stdin: call.args.stdin,
      timeoutS,
      limits,
    });
    const { timings: _timings, ...result } = r;
    return result;
  },
});
