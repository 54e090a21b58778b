import type Router from '@koa/router';
import { z } from 'zod';
import { errorStatus } from '../errors.ts';
import { authorizationKind, type HttpMethod, type RouteDeclaration, type RouteGroup } from './declaration.ts';

type JsonSchema = Record<string, unknown>;

export interface OpenApiSource {
  /** Where the API is mounted (`/api/v1`); declared paths are relative to it. */
  basePath: string;
  groups: RouteGroup[];
  title: string;
  version: string;
  description?: string;
}

/** `/content/:projectId/*path` → `/content/{projectId}/{path}` (OpenAPI path templating). */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}').replace(/\/+$/, '') || '/';
}

const pathParamNames = (p: string) => [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

function jsonSchema(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Query or path parameters from an object schema: one parameter per property. */
function parameters(schema: z.ZodType | undefined, where: 'query' | 'path', names: string[]): JsonSchema[] {
  const js = schema ? jsonSchema(schema) : { properties: {} };
  const props = (js.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((js.required ?? []) as string[]);
  const list = Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
    schema: s,
  }));
  // Path templates name every parameter, declared or not.
  if (where === 'path') for (const n of names) if (!props[n]) list.push({ name: n, in: 'path', required: true, schema: { type: 'string' } });
  return list;
}

const successEnvelope = (data: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['success', 'code', 'data', 'message'],
  properties: { success: { const: true }, code: { const: 0 }, data, message: { type: 'string' } },
});

const errorEnvelope: JsonSchema = {
  type: 'object',
  required: ['success', 'code', 'data', 'message', 'error'],
  properties: {
    success: { const: false },
    code: { type: 'string', enum: Object.keys(errorStatus) },
    data: { type: 'null' },
    message: { type: 'string' },
    error: { type: 'object', properties: { code: { type: 'string' }, details: {} } },
  },
};

const streamSchema = (media: NonNullable<RouteDeclaration['streams']>): JsonSchema =>
  media === 'text/event-stream'
    ? { type: 'string', description: 'a stream of events; see the description' }
    : media === 'text/html'
      ? { type: 'string', description: 'a page for the browser; see the description' }
      : { type: 'string', format: 'binary', description: 'the bytes of the file; see the description' };

function operation(r: RouteDeclaration, tag: string, path: string): JsonSchema {
  const success = {
    description: r.summary,
    content: r.streams
      ? { [r.streams]: { schema: streamSchema(r.streams) } }
      : { 'application/json': { schema: successEnvelope(r.response ? jsonSchema(r.response) : {}) } },
  };
  const op: JsonSchema = {
    tags: [tag],
    summary: r.summary,
    operationId: operationId(r.method, path),
    parameters: [...parameters(r.params, 'path', pathParamNames(path)), ...parameters(r.query, 'query', [])],
    responses: {
      [String(r.status ?? 200)]: success,
      ...(r.alsoStatus ? { [String(r.alsoStatus)]: success } : {}),
      default: { description: 'An error, in the envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    },
  };
  if (r.description) op.description = r.description;
  if (r.permission) op['x-permission'] = r.permission;
  // The check the mount enforces before the handler (see RouteAuthorization).
  op['x-authorization'] = authorizationKind(r.authorize);
  if ('public' in r.authorize) op.security = [];
  if (r.body) op.requestBody = { required: true, content: { [r.multipart ? 'multipart/form-data' : 'application/json']: { schema: jsonSchema(r.body) } } };
  return op;
}

function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** The OpenAPI 3.1 document of every mounted route. */
export function openApiDocument(source: OpenApiSource): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const add = (path: string, method: string, op: JsonSchema) => {
    const item = (paths[path] ??= {});
    if (!item[method]) item[method] = op;
  };
  for (const g of source.groups) {
    for (const r of g.routes) {
      const path = openApiPath(g.prefix + r.path);
      add(path, r.method, operation(r, g.tag, path));
      if (g.server) paths[path]!.servers = [{ url: g.server }] as unknown as JsonSchema;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: source.title, version: source.version, ...(source.description ? { description: source.description } : {}) },
    servers: [{ url: source.basePath }],
    security: [{ bearer: [] }, { accessKey: [] }, { sessionCookie: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A user access token (POST /auth/login) or an access key (cns_…)' },
        accessKey: { type: 'apiKey', in: 'header', name: 'X-Access-Key' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'cns_access',
          description: 'The web dashboard\'s session (POST /auth/login with session "cookie"): requests other than GET, HEAD and OPTIONS must echo the cns_csrf cookie in X-CSRF-Token',
        },
      },
      schemas: { Error: errorEnvelope },
    },
    paths,
  };
}

/** Each (path, method) a @koa/router instance answers; HEAD is implied by GET. */
export function routerRoutes(router: Router): { path: string; method: HttpMethod }[] {
  const out: { path: string; method: HttpMethod }[] = [];
  for (const layer of router.stack) {
    for (const m of layer.methods) {
      const method = m.toLowerCase();
      if (method === 'head') continue;
      out.push({ path: String(layer.path), method: method as HttpMethod });
    }
  }
  return out;
}
