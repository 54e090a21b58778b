import { z } from 'zod';

/** The paging fields a list answer carries next to its items (`pageInfo` in src/http/pagination.ts). */
export const pageFields = { total: z.number().int(), limit: z.number().int(), offset: z.number().int() };
