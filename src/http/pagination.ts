import { z } from 'zod';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** `limit`/`offset` query parameters of every paginated list; extend it with a list's own filters. */
export const paginationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
  offset: z.coerce.number().int().min(0).default(0),
});

/** The paging fields a list answer carries next to its items. */
export const pageInfo = (total: number, page: { limit: number; offset: number }) => ({ total, limit: page.limit, offset: page.offset });
