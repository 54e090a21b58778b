import type { z } from 'zod';
import { validationError } from './errors.ts';

export type InputSource = 'body' | 'query' | 'params';

/**
 * Parses untrusted input with a zod schema; a failure is a 422 whose details name each
 * offending field (`{field, message}`), never a 500.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, source: InputSource): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join('.') : source,
    message: issue.message,
  }));
  const fields = [...new Set(details.map((d) => d.field))].join(', ');
  throw validationError(`Invalid ${source}: check ${fields}.`, details);
}
