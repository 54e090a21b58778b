import { z } from 'zod';
import { DomainError } from '../../errors/domainError.ts';
import { toolSchemas } from '../../tools/registry.ts';
import type { CallContext } from '../context.ts';

/** A JSON Schema object as MCP's `inputSchema` carries it. */
export type InputSchema = { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };

export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool of an MCP server: an endpoint's (C = CallContext) or an agent's. */
export interface McpTool<C = CallContext> {
  name: string;
  title: string;
  description: string;
  /** Built for the caller's server (an endpoint's descriptions name its folder). */
  inputSchema(c: C): InputSchema;
  annotations: ToolHints;
  /** Changes content: offered only to callers who may write (and on an endpoint, only when it is read_write). */
  writes: boolean;
  run(c: C, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The tool a call names, or why this caller may not call it, or null when the server has no such tool. */
export type Lookup<C = CallContext> = { tool: McpTool<C> } | { refused: string } | null;

/** A tool type's input as the tools library declares it (a copy, without `$schema`). */
export function typeInputSchema(type: string): InputSchema {
  const schema = structuredClone(toolSchemas(type).input) as InputSchema;
  delete schema.$schema;
  return schema;
}

const converted = new WeakMap<z.ZodType, InputSchema>();

/** A zod input schema as JSON Schema, without the `$schema` key (a copy: callers adapt descriptions). */
export function jsonInput(schema: z.ZodType): InputSchema {
  let out = converted.get(schema);
  if (!out) {
    const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete js.$schema;
    out = js as InputSchema;
    converted.set(schema, out);
  }
  return structuredClone(out);
}

/** Arguments checked against a zod schema; a failure is a 422 naming each argument, as the tools library says it. */
export function parseArgs<T>(schema: z.ZodType<T>, args: unknown): T {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ field: ['arguments', ...i.path].join('.'), message: i.message }));
  throw new DomainError('VALIDATION_ERROR', `Invalid arguments: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);
}

/** Path arguments say what they are relative to: the project, held to the endpoint's folder. */
export const pathHint = (c: CallContext, what: string) => `${what}: a project path beneath "${c.root}" (e.g. "${c.root}/notes.md"); empty = "${c.root}" itself`;

/** Describes a schema's path arguments for the caller's endpoint. */
export function withPaths(schema: InputSchema, c: CallContext, paths: Record<string, string>): InputSchema {
  for (const [field, what] of Object.entries(paths)) {
    const prop = schema.properties?.[field] as { description?: string } | undefined;
    if (prop) prop.description = pathHint(c, what);
  }
  return schema;
}
