import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { invalidField } from '../../errors/domainError.ts';
import { ajvFor } from '../../util/ajv.ts';

/** Errors listed for one invalid answer (what the model is told, and what a failed task reports). */
const MAX_ERRORS = 20;

/**
 * Strict about the schema (an unknown keyword is a mistake its author wants to hear about at
 * creation, not a rule silently skipped while extracting), lenient about type combinations.
 */
const options: Options = { allErrors: true, strictSchema: true, strictTypes: false, strictTuples: false, strictRequired: false, allowUnionTypes: true, logger: false };

/**
 * Compiles a rule's JSON Schema with ajv, for the draft its `$schema` names (draft-07 when it
 * names none, 2019-09, 2020-12); a schema ajv refuses is a 422 naming `json_schema`.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const ajv = ajvFor(schema, options);
  try {
    return ajv.compile(schema);
  } catch (e) {
    throw invalidField('json_schema', `json_schema is not a usable JSON Schema: ${(e as Error).message}`);
  }
}

export interface SchemaViolation {
  /** JSON Pointer into the value ('' is the value itself). */
  pointer: string;
  message: string;
}

/** ajv's errors, the first few, as `{pointer, message}`. */
export function violations(errors: ErrorObject[] | null | undefined): SchemaViolation[] {
  return (errors ?? []).slice(0, MAX_ERRORS).map((e) => ({ pointer: e.instancePath, message: e.message ?? e.keyword }));
}

/** One line per violation, for the model's next message and the task's error message. */
export const describeViolations = (list: SchemaViolation[]): string => list.map((v) => `${v.pointer || '/'} ${v.message}`).join('; ');
