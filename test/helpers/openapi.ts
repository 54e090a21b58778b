import type { ExecutionContext } from 'ava';
import { z } from 'zod';
import { apiRoutes } from '../../src/app/routes.ts';
import type { Services } from '../../src/app/services.ts';
import type { RouteDeclaration } from '../../src/http/routes/declaration.ts';
import { openApiPath } from '../../src/http/routes/openapi.ts';

/** The declaration behind a method and an OpenAPI path (relative to the base path). */
export function declared(services: Services, method: string, path: string): RouteDeclaration {
  for (const g of apiRoutes(services).groups) {
    for (const r of g.routes) if (r.method === method && openApiPath(g.prefix + r.path) === path) return r;
  }
  throw new Error(`no declaration for ${method} ${path}`);
}

type JsonSchema = { properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[] };

/** Fields of `value` its JSON schema does not name, at any depth (`a.b.0.c`); a union counts by its best branch. */
function undocumented(schema: JsonSchema, value: unknown, at: string): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    return branches.map((b) => undocumented(b, value, at)).reduce((best, x) => (x.length < best.length ? x : best));
  }
  if (Array.isArray(value)) return schema.items ? value.flatMap((v, i) => undocumented(schema.items!, v, `${at}${i}.`)) : [];
  if (!value || typeof value !== 'object' || !schema.properties) return [];
  const props = schema.properties;
  return Object.entries(value).flatMap(([k, v]) => (k in props ? undocumented(props[k]!, v, `${at}${k}.`) : [`${at}${k}`]));
}

/**
 * A real success answer must match the documented `data` schema of its route, and carry no field
 * the document does not name (at any depth): the document describes what clients really get.
 */
export function assertDocumented(
  t: ExecutionContext,
  services: Services,
  method: string,
  path: string,
  res: { status?: number; body: { success: boolean; code: unknown; data: unknown } },
): void {
  const route = declared(services, method, path);
  const schema = route.response;
  if (!schema) throw new Error(`${method} ${path} declares no response`);
  const statuses = [route.status ?? 200, ...(route.alsoStatus ? [route.alsoStatus] : [])];
  if (res.status !== undefined) t.true(statuses.includes(res.status as 200), `${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  t.true(res.body.success, `${method} ${path}: ${JSON.stringify(res.body)}`);
  t.is(res.body.code, 0);
  const parsed = schema.safeParse(res.body.data);
  t.true(parsed.success, `${method} ${path}: ${parsed.success ? '' : parsed.error.message}`);
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  t.deepEqual(undocumented(json, res.body.data, ''), [], `${method} ${path} answers only documented fields`);
}
