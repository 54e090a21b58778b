import { ProviderError } from '../../llm/provider.ts';
import { ConversionError } from '../converters/converter.ts';
import type { TaskError } from './taskTypes.ts';

/** Why a task failed, as its record reports it (`error: {code, message, details?}`). */
export class TaskFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'TaskFailure';
  }
}

/**
 * Any failure of a task as its record's `error`: conversion failures keep their code (corrupt,
 * encrypted, too_large, unsupported, …), language-model failures are `provider_<kind>`,
 * content-store refusals keep theirs (CONFLICT, PAYLOAD_TOO_LARGE, …, lower-cased), and
 * anything else is `internal` with its message.
 */
export function taskError(e: unknown): TaskError {
  if (e instanceof TaskFailure) return { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) };
  if (e instanceof ConversionError) return { code: e.code, message: e.message };
  if (e instanceof ProviderError) return { code: `provider_${e.kind}`, message: `the language model failed: ${e.message}` };
  const err = e as { code?: unknown; message?: unknown; details?: unknown } | null;
  if (err && typeof err.code === 'string' && /^[A-Z_]+$/.test(err.code) && typeof err.message === 'string') {
    return { code: err.code.toLowerCase(), message: err.message, ...(err.details ? { details: err.details } : {}) };
  }
  return { code: 'internal', message: e instanceof Error ? e.message : String(e) };
}
