import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';
import { parseAcceptingNull } from '../../http/validate.ts';
import { pageFields } from '../presenters/page.ts';

const id = z.string().min(1).max(100);
const path = z.string().min(1).max(4096);
const base64 = z.string().refine((s) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s), 'must be base64');
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

/** `mode` (or `trigger_mode`, the earlier name, still accepted): manual, interval (with `interval_s`), webhook, or a client mode. */
export const triggerBody = z
  .object({
    mode: z.string().min(1).max(50).optional(),
    trigger_mode: z.string().min(1).max(50).optional().describe('the earlier name of `mode`'),
    interval_s: z.number().int().min(1).max(31 * 86_400).optional().describe('seconds between runs of an interval sync (jittered)'),
  })
  .strict()
  .refine((b) => b.mode !== undefined || b.trigger_mode !== undefined, { message: 'mode is required', path: ['mode'] })
  .refine((b) => b.mode === undefined || b.trigger_mode === undefined || b.mode === b.trigger_mode, { message: 'give mode or trigger_mode, not two different ones', path: ['trigger_mode'] });

export const runsQuery = paginationQuery;

/**
 * push-file body: one change with its fields at the top level, or `files`, a list of changes
 * applied as one commit; either form may carry `run_id` and `message`.
 * - write: `path`, `content` (base64 of the file's bytes), optional `node_type` (json, markdown,
 *   file; default from the extension) and `base_version` (0 = must not exist yet).
 * - delete: `path`, optional `base_version` (soft delete into the trash).
 * - move: `from`, `path` (the new path), optional `base_version`.
 */
const meta = { run_id: id.optional(), message: z.string().max(10_000).optional() };
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

const pushBatchBody = z.object({ ...meta, files: z.array(pushOp).min(1).max(2000) });
const pushSingleBody = z.discriminatedUnion('action', [writeOp.extend(meta), deleteOp.extend(meta), moveOp.extend(meta)]);

/**
 * PuppyOne's push of one file: `external_resource_id` (its path inside the synced folder, that is
 * below the sync's scope), `content_json` or `content_md`, and `content_hash` (the client's own
 * sha256 of its file, kept by the client to notice changes; not checked: the server stores the
 * content it is sent). Becomes one write; the answer says `action`: created, updated or skipped.
 */
const puppyOnePushBody = z
  .object({
    ...meta,
    external_resource_id: path,
    content_json: z.unknown().optional(),
    content_md: z.string().optional(),
    content_hash: z.string().max(200).optional(),
    base_version: z.number().int().min(0).optional(),
  })
  .superRefine((b, ctx) => {
    const given = (['content_json', 'content_md'] as const).filter((k) => b[k] !== undefined && b[k] !== null);
    if (given.length !== 1) ctx.addIssue({ code: 'custom', path: ['content_md'], message: 'give exactly one of content_json and content_md' });
  })
  .transform((b) => ({
    run_id: b.run_id,
    message: b.message,
    external_resource_id: b.external_resource_id,
    node_type: (b.content_json !== undefined && b.content_json !== null ? 'json' : 'markdown') as 'json' | 'markdown',
    text: b.content_json !== undefined && b.content_json !== null ? JSON.stringify(b.content_json) : b.content_md!,
    base_version: b.base_version,
  }));

/** Picks the form by the presence of `files` (or PuppyOne's `external_resource_id`), so that validation errors name the real fields. */
function pushBodySchema(body: unknown) {
  if (body !== null && typeof body === 'object' && 'external_resource_id' in body) return puppyOnePushBody;
  return body !== null && typeof body === 'object' && 'files' in body ? pushBatchBody : pushSingleBody;
}

/**
 * The push-file body as one schema: documented as either form, validated with the form the body
 * takes (a plain union would answer a bad single change with one error about the whole body).
 */
export const pushBody = z
  .unknown()
  .transform((body, ctx) => {
    // The chosen form is parsed as every body is (null = absent), its errors passed on as they are.
    const r = parseAcceptingNull(pushBodySchema(body), body);
    if (r.success) return r.data;
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input: body });
    return z.NEVER;
  })
  .meta({ anyOf: (z.toJSONSchema(z.union([pushBatchBody, pushSingleBody, puppyOnePushBody]), { io: 'input' }) as { anyOf: unknown[] }).anyOf });

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

/** PuppyOne's acknowledgement of one pulled file: the node (by id, or by path) at the version it wrote. */
const ackItem = z
  .object({
    node_id: id.optional(),
    path: path.optional(),
    version: z.number().int().min(1),
    remote_hash: z.string().max(200).optional().describe("the client's hash of what it wrote (its own record; not checked)"),
  })
  .refine((i) => i.node_id !== undefined || i.path !== undefined, { message: 'node_id or path is required', path: ['node_id'] });

/** `cursor`, or PuppyOne's `items` (the cursor is then the newest commit among the versions they name). */
export const ackBody = z.object({
  cursor: z.number().int().min(0).optional(),
  items: z.array(ackItem).min(1).max(10_000).optional(),
  run_id: id.optional(),
  files_down: z.number().int().min(0).optional(),
  conflicts: z.array(z.string().max(4096)).max(10_000).optional(),
  errors: z.array(z.string().max(10_000)).max(1000).optional(),
}).superRefine((b, ctx) => {
  if (b.cursor === undefined && b.items === undefined) ctx.addIssue({ code: 'custom', path: ['cursor'], message: 'cursor (or items) is required' });
  if (b.cursor !== undefined && b.items !== undefined) ctx.addIssue({ code: 'custom', path: ['items'], message: 'give cursor or items, not both' });
});

export const changelogQuery = z.object({
  project_id: id,
  cursor: int(0).default(0),
  limit: int(1).max(1000).default(100),
});

// Answers: what the presenters (presenter.ts) give, as documented in the OpenAPI document.

const connectorField = z.object({ name: z.string(), type: z.enum(['string', 'url', 'path', 'integer', 'boolean', 'string_list']), required: z.boolean(), description: z.string() });
export const connectorList = z.object({
  connectors: z.array(
    z.object({
      provider: z.string(),
      display_name: z.string(),
      description: z.string(),
      auth: z.object({
        type: z.enum(['none', 'public', 'oauth', 'api_key']),
        description: z.string(),
        scopes: z.array(z.string()).optional().describe('the OAuth scopes the connection asks for'),
        personal_token: z.boolean().optional().describe('whether POST /oauth/{provider}/token accepts a personal or integration token'),
      }),
      capabilities: z
        .object({
          pull: z.boolean(),
          push: z.object({ create: z.boolean(), update: z.boolean(), delete: z.boolean() }).describe('which local changes go back to the source'),
          incremental: z.boolean(),
          webhooks: z.boolean(),
        })
        .optional(),
      sync_modes: z.array(z.string()),
      default_sync_mode: z.string(),
      directions: z.array(z.enum(['pull', 'push'])),
      config_fields: z.array(connectorField),
    }),
  ),
});

export const syncStatus = z.object({
  project_id: z.string(),
  project_version: z.number().int(),
  syncs: z.number().int(),
  active: z.number().int(),
  paused: z.number().int(),
  last_run_at: z.string().nullable(),
  providers: z.array(z.string()),
  runs: z.object({
    queued: z.number().int(),
    running: z.number().int(),
    failed_last: z.number().int().describe('syncs whose last run failed'),
  }),
  needs_reauth: z.number().int().describe('syncs paused because their connection must be authorized again'),
  items: z.array(
    z.object({
      id: z.string(),
      provider: z.string(),
      name: z.string(),
      status: z.enum(['active', 'paused']),
      pause_reason: z.string().nullable(),
      trigger_mode: z.string(),
      next_run_at: z.string().nullable(),
      last_run: z.lazy(() => runSchema).nullable(),
    }),
  ),
});

export const syncSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  provider: z.string(),
  name: z.string(),
  scope_path: z.string(),
  status: z.enum(['active', 'paused']),
  pause_reason: z.string().nullable().describe('user, needs_reauth or disconnected'),
  trigger_mode: z.string(),
  interval_s: z.number().int().nullable(),
  next_run_at: z.string().nullable().describe('interval syncs: when the scheduler runs it next'),
  webhook_url: z.string().nullable().describe('webhook syncs: where the platform posts (signed with the secret given once)'),
  acked_cursor: z.number().int(),
  last_run_at: z.string().nullable(),
  key_prefix: z.string(),
  config: z.record(z.string(), z.unknown()).describe('a url sync\'s address without userinfo or query string'),
  created_at: z.string(),
  updated_at: z.string(),
});
export const syncList = z.object({ syncs: z.array(syncSchema), total: z.number().int() });
export const syncWithKey = z.object({ sync: syncSchema, key: z.string().describe('shown only in this answer') });

export const runSchema = z.object({
  id: z.string(),
  sync_id: z.string(),
  project_id: z.string(),
  trigger: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'interrupted']),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  cursor_from: z.number().int().nullable(),
  cursor_to: z.number().int().nullable(),
  files_up: z.number().int(),
  files_down: z.number().int(),
  conflicts: z.array(z.string()).describe('project paths changed on both sides: the source won, our version stays in the history'),
  errors: z.array(z.string()),
  pulled: z.object({ created: z.number().int(), updated: z.number().int(), deleted: z.number().int() }),
  pushed: z.number().int(),
  cursor_before: z.string().nullable().describe("the source's change cursor the run started from"),
  cursor_after: z.string().nullable(),
  error: z.string().nullable().describe('why the run failed (the provider\'s own message)'),
  http_calls: z.number().int(),
  rate_limited_ms: z.number().int(),
});
export const webhookResult = z.object({
  duplicate: z.boolean().describe('the delivery (its id, or its body and signature) was already received: no run was started'),
  run: runSchema.nullable().describe('the run started or joined; for a duplicate, the run its first delivery started (null when no longer kept)'),
});
export const triggerResult = syncSchema.extend({
  webhook_secret: z.string().optional().describe('webhook mode: the signing secret, shown only in this answer'),
});
export const runList = z.object({ runs: z.array(runSchema), ...pageFields });

export const pushResult = z.object({
  project_version: z.number().int().nullable(),
  changed: z.boolean(),
  action: z.enum(['created', 'updated', 'skipped']).optional().describe("PuppyOne's push of one file (external_resource_id): what it did"),
  files: z.array(z.record(z.string(), z.unknown())).describe('one record per change, in the order sent'),
});

export const pullPage = z.object({
  run_id: z.string(),
  scope_path: z.string(),
  cursor: z.number().int(),
  snapshot: z.boolean().describe('from cursor 0 the answer is the whole subtree: what it does not list no longer exists'),
  has_more: z.boolean(),
  next_after: z.string().nullable(),
  files: z.array(
    z.object({
      action: z.enum(['upsert', 'delete']),
      node_id: z.string(),
      node_type: z.string(),
      path: z.string(),
      version: z.number().int(),
      content_hash: z.string().nullable(),
      size: z.number().int(),
      content: z.string().optional().describe('base64 of the bytes, unless content=0'),
      external_resource_id: z.string().describe("the path below the sync's scope (PuppyOne's name)"),
      current_version: z.number().int().describe("version, by the name PuppyOne's clients read"),
      content_json: z.unknown().optional().describe('json nodes with their content: the value (PuppyOne)'),
      content_md: z.string().optional().describe('markdown nodes with their content: the text (PuppyOne)'),
    }),
  ),
});

export const ackResult = z.object({ sync: syncSchema, run: runSchema.nullable() });

export const changelogPage = z.object({
  entries: z.array(
    z.object({
      project_version: z.number().int(),
      node_id: z.string(),
      path: z.string(),
      old_path: z.string().nullable(),
      action: z.string().describe('a rollback is shown as update (see operation)'),
      operation: z.string().describe('what the change was: as action, but a rollback is rollback'),
      node_type: z.string(),
      version: z.number().int(),
      actor: z.object({
        type: z.enum(['user', 'agent', 'sync']),
        id: z.string(),
        author: z.string().describe('who made the change (a user email or agent:<name>)'),
        authored_by: z.string().nullable().describe('the author a pushed git commit names, when not the actor'),
      }),
      created_at: z.string(),
    }),
  ),
  cursor: z.number().int(),
  has_more: z.boolean(),
});
