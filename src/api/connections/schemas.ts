import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';

const name = z.string().trim().min(1, 'must not be empty').max(200);
const mode = z.enum(['read', 'read_write']);
// Normalized and checked for `..` and empty segments by the domain (parseScopePath).
const scopePath = z.string().max(1024);

export const createConnectionBody = z.object({
  project_id: z.string().min(1),
  name,
  kind: z.literal('api', { error: 'only "api" connections are created here; other kinds are created by their own features' }),
  scope_path: scopePath.optional(),
  mode: mode.optional(),
});

export const listConnectionsQuery = paginationQuery.extend({
  project_id: z.string().min(1),
  kind: z.enum(['api', 'agent', 'mcp', 'sandbox', 'sync']).optional(),
});

export const updateConnectionBody = z.object({
  name: name.optional(),
  scope_path: scopePath.optional(),
  mode: mode.optional(),
  status: z.enum(['active', 'paused', 'revoked']).optional(),
});

export const connectionParams = z.object({ id: z.string().min(1).max(100) });

/** What `presentConnection` answers (the response schema in the OpenAPI document). */
export const connectionSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  kind: z.enum(['api', 'agent', 'mcp', 'sandbox', 'sync']),
  name: z.string(),
  scope_path: z.string().describe("the subtree the key may reach; '' is the whole project"),
  mode: z.enum(['read', 'read_write']),
  status: z.enum(['active', 'paused', 'revoked']),
  key_prefix: z.string(),
  config: z.record(z.string(), z.unknown()),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
});

export const connectionWithKey = z.object({ connection: connectionSchema, key: z.string().describe('shown only in this answer') });
export const connectionList = z.object({ connections: z.array(connectionSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
