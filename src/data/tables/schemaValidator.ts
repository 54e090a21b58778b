import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { Lru } from '../../content/lru.ts';
import { DomainError } from '../../errors/domainError.ts';
import { ajvFor } from '../../util/ajv.ts';

/** Schema errors reported in one answer: a 5 MiB table can violate a schema 100,000 times. */
const MAX_REPORTED_ERRORS = 50;

/**
 * Strict about the schema (an unknown keyword or format is a mistake the author wants to hear
 * about, not a rule silently skipped), lenient about type combinations; no console logging.
 */
const options: Options = {
  allErrors: true,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  logger: false,
};

export interface SchemaViolation {
  field: string;
  message: string;
  /** Where in the table's document (JSON Pointer). */
  pointer: string;
  keyword: string;
  schema_path: string;
  params: Record<string, unknown>;
}

/**
 * JSON Schema validation of tables with ajv. Compiled validators are kept by the schema's text,
 * so a table's every change costs one validation, not a compilation.
 */
export class SchemaValidator {
  private readonly compiled = new Lru<string, ValidateFunction>(128);

  /** Compiles `schema` (VALIDATION_ERROR naming `field` when it is not a schema ajv accepts). */
  compile(schema: Record<string, unknown>, field = 'json_schema'): ValidateFunction {
    const key = JSON.stringify(schema);
    const cached = this.compiled.get(key);
    if (cached) return cached;
    let validate: ValidateFunction;
    try {
      // A fresh instance per schema: two tables' schemas with the same $id must not collide (about 1 ms).
      validate = ajvFor(schema, options).compile(schema);
    } catch (e) {
      const message = `not a usable JSON Schema: ${(e as Error).message}`;
      throw new DomainError('VALIDATION_ERROR', `${field} is ${message}`, [{ field, message }]);
    }
    this.compiled.set(key, validate);
    return validate;
  }

  /**
   * Throws VALIDATION_ERROR unless `doc` is valid: `intro` and the first error in the message,
   * every error (up to 50) in the details, each naming `field` and its place in the document.
   */
  validate(schema: Record<string, unknown>, doc: unknown, field: string, intro: string): void {
    const validate = this.compile(schema);
    if (validate(doc)) return;
    const errors = validate.errors ?? [];
    const details = errors.slice(0, MAX_REPORTED_ERRORS).map((e) => violation(e, field));
    const more = errors.length > MAX_REPORTED_ERRORS ? ` (the first ${MAX_REPORTED_ERRORS} of ${errors.length} errors are listed)` : '';
    const first = details[0] ? `: ${details[0].pointer || '/'} ${details[0].message}` : '';
    throw new DomainError('VALIDATION_ERROR', `${intro}${first}${more}.`, details);
  }
}

function violation(e: ErrorObject, field: string): SchemaViolation {
  return { field, message: e.message ?? e.keyword, pointer: e.instancePath, keyword: e.keyword, schema_path: e.schemaPath, params: e.params as Record<string, unknown> };
}
