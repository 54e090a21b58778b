import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';

const id = z.string().min(1).max(100);
const path = z.string().min(1).max(4096);
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').refine((s) => s.length % 4 === 0, 'must be base64');
const int = (min: number) => z.coerce.number().int().min(min);

export const projectQuery = z.object({ project_id: id });
export const syncParams = z.object({ syncId: id });
export const runParams = z.object({ runId: id });

export const bootstrapBody = z.object({
  project_id: id,
  provider: z.string().min(1).max(50),
  name: z.string().min(1).max(200).optional(),
  config: z.record(z.string(), z.unknown()).default({}),
});

export const triggerBody = z.object({ trigger_mode: z.string().min(1).max(50) });

export const runsQuery = paginationQuery;

const writeOp = z.object({
  action: z.literal('write'),
  path,
  content: base64,
  node_type: z.enum(['json', 'markdown', 'file']).optional(),
  base_version: z.number().int().min(0).optional(),
});
const deleteOp = z.object({ action: z.literal('delete'), path, base_version: z.number().int().min(1).optional() });
const moveOp = z.object({ action: z.literal('move'), from: path, path, base_version: z.number().int().min(1).optional() });
export const pushOp = z.discriminatedUnion('action', [writeOp, deleteOp, moveOp]);

/** One file (the op's fields at the top level) or `files`: a batch applied as one commit. */
export const pushBody = z.union([
  z.object({ run_id: id.optional(), message: z.string().max(10_000).optional(), files: z.array(pushOp).min(1).max(2000) }),
  z.intersection(pushOp, z.object({ run_id: id.optional(), message: z.string().max(10_000).optional() })),
]);

export const pullQuery = z.object({
  cursor: int(0).default(0),
  /** The commit number the first page answered as `cursor`: later pages of one pull keep it. */
  until: int(0).optional(),
  /** Node id after which this page starts (`next_after` of the previous page). */
  after: z.string().max(100).optional(),
  limit: int(1).max(5000).default(500),
  run_id: id.optional(),
  /** `0` lists changes without their content (the client then asks for what it needs with `ids`). */
  content: z.enum(['0', '1', 'false', 'true']).default('1').transform((v) => v === '1' || v === 'true'),
  /** Comma-separated node ids: their current state and content, within an open run (`run_id`). */
  ids: z
    .string()
    .max(20_000)
    .transform((v) => v.split(',').filter(Boolean))
    .optional(),
});

export const ackBody = z.object({
  cursor: z.number().int().min(0),
  run_id: id.optional(),
  files_down: z.number().int().min(0).optional(),
  conflicts: z.array(z.string().max(4096)).max(10_000).optional(),
  errors: z.array(z.string().max(10_000)).max(1000).optional(),
});

export const changelogQuery = z.object({
  project_id: id,
  cursor: int(0).default(0),
  limit: int(1).max(1000).default(100),
});
