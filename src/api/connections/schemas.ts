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
