import { z } from 'zod';

const id = z.string().min(1).max(100);
const time = z.iso.datetime({ offset: true });

const range = {
  project_id: id,
  from: time.optional().describe('start of the range (ISO 8601); default: 24 hours before `to`'),
  to: time.optional().describe('end of the range, exclusive (ISO 8601); default: now'),
};

export const timeseriesQuery = z
  .object({
    ...range,
    interval: z.enum(['minute', 'hour', 'day']).default('hour').describe('bucket size; buckets are whole UTC minutes, hours or days'),
    publish_id: id.optional().describe('only the views of this publish'),
    connection_id: id.optional().describe('only the API calls of this connection (agents, MCP endpoints, sandboxes, syncs, keys)'),
    node_id: id.optional().describe('only the accesses of this node'),
  })
  .strict();

export const summaryQuery = z
  .object({ ...range, limit: z.coerce.number().int().min(1).max(100).default(10).describe('entries of each top list') })
  .strict();

const totals = z.object({ views: z.number().int(), api_calls: z.number().int(), unique_visitors: z.number().int() });

export const timeseriesAnswer = z.object({
  project_id: z.string(),
  interval: z.enum(['minute', 'hour', 'day']),
  from: z.string().describe('the first bucket'),
  to: z.string().describe('the end of the last bucket'),
  points: z.array(totals.extend({ t: z.string().describe('start of the bucket') })),
});

export const summaryAnswer = z.object({
  project_id: z.string(),
  from: z.string(),
  to: z.string(),
  totals: totals.describe('unique_visitors: distinct visitors per day (the hash salt changes every day), summed over days'),
  top_publishes: z.array(
    z.object({ publish_id: z.string(), node_id: z.string().nullable(), path: z.string().nullable(), slug: z.string().nullable(), views: z.number().int(), unique_visitors: z.number().int() }),
  ),
  top_nodes: z.array(
    z.object({
      node_id: z.string(),
      path: z.string().nullable(),
      type: z.enum(['folder', 'json', 'markdown', 'file']).nullable(),
      views: z.number().int(),
      api_calls: z.number().int(),
      unique_visitors: z.number().int(),
    }),
  ),
  top_connections: z.array(
    z.object({
      connection_id: z.string(),
      kind: z.enum(['api', 'agent', 'mcp', 'sandbox', 'sync']).nullable().describe('null when the connection was deleted'),
      name: z.string().nullable().describe('shown to callers who may manage the project\'s keys (keys:manage), as listing connections is'),
      api_calls: z.number().int(),
    }),
  ),
});
