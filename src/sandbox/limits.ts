import { z } from 'zod';
import type { RunLimits } from './runtime/runtime.ts';

/** Output kept of each stream; the rest is dropped and the result says so. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;
/** The longest command line accepted (422 past it). */
export const MAX_COMMAND_BYTES = 64 * 1024;
export const MAX_STDIN_BYTES = 1024 * 1024;
export const MAX_TIMEOUT_S = 300;

const MiB = 1024 * 1024;

/**
 * An endpoint's limits as the API takes them (all optional: the defaults apply). `timeout_s` is
 * both the default of its commands and the most one of them may ask for.
 */
export const endpointLimitsSchema = z
  .object({
    timeout_s: z.number().int().min(1).max(MAX_TIMEOUT_S).optional().describe('wall time of a command, seconds (default 30, at most 300)'),
    memory_mb: z.number().int().min(16).max(8192).optional().describe('memory of the whole process tree, MiB (default 512)'),
    max_processes: z.number().int().min(8).max(4096).optional().describe('processes and threads at once (default 256)'),
    disk_mb: z.number().int().min(1).max(8192).optional().describe('bytes the working folder may hold, MiB (default 1024)'),
  })
  .strict();

export type EndpointLimits = z.infer<typeof endpointLimitsSchema>;

export const DEFAULT_LIMITS: Required<EndpointLimits> = { timeout_s: 30, memory_mb: 512, max_processes: 256, disk_mb: 1024 };

/** The limits in force: the endpoint's own over the defaults. */
export function effectiveLimits(limits: EndpointLimits | undefined): Required<EndpointLimits> {
  return { ...DEFAULT_LIMITS, ...limits };
}

/** What the runtime is given for one command (`timeoutS` already checked against the endpoint's). */
export function runLimits(limits: Required<EndpointLimits>, timeoutS: number): RunLimits {
  return {
    timeoutMs: timeoutS * 1000,
    memoryBytes: limits.memory_mb * MiB,
    maxProcesses: limits.max_processes,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    maxDiskBytes: limits.disk_mb * MiB,
  };
}
