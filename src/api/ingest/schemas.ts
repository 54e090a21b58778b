import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';
import type { UploadedFile } from '../../ingest/ingest.ts';
import { MAX_DEPTH } from '../../ingest/ingest.ts';
import { TASK_STATUSES } from '../../ingest/queue/taskTypes.ts';
import { paginationQuery } from '../../http/pagination.ts';

const id = z.string().min(1).max(100);
const mode = z
  .enum(['markdown', 'json', 'raw'])
  .describe('markdown: text formats to Markdown, a CSV/TSV as one Markdown table; json: tabular formats (CSV, TSV, XLSX, JSON) to JSON rows only; raw: stored unchanged; absent: the rule\'s target, else Markdown for text and JSON rows plus a Markdown preview for CSV, TSV and XLSX');
const targetPath = z.string().max(1024).default('').describe("the target folder, created as needed ('' or absent: the project root)");

const isUploaded = (v: unknown): v is UploadedFile => typeof v === 'object' && v !== null && typeof (v as UploadedFile).path === 'string';

export const submitFileBody = z.object({
  project_id: id,
  path: targetPath,
  rule_id: id.optional().describe('the rule to apply; absent: the first rule whose match fits each file (when mode is absent too)'),
  mode: mode.optional(),
  keep_original: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((v) => v === 'true' || v === '1')
    .describe('also store each uploaded file unchanged, as a file node next to its result'),
  files: z
    .array(z.custom<UploadedFile>(isUploaded, 'must be a file part').meta({ type: 'string', format: 'binary', description: 'a file part' }))
    .min(1, 'send at least one file')
    .describe('one or more file parts (any field name); one task per file'),
}).strict();

export const submitSaasBody = z.object({
  project_id: id,
  path: targetPath,
  rule_id: id.optional(),
  mode: mode.optional(),
  keep_original: z.boolean().default(false).describe('also store each fetched page unchanged (index.html, report.pdf) next to its result'),
  source: z
    .object({
      type: z.string().min(1).max(100).describe("'url', or a platform connector (answered 422 with the supported types until one can be ingested)"),
      url: z.url({ protocol: /^https?$/, error: 'must be an http or https address' }).max(4096).optional().describe('type url: the page'),
      depth: z.number().int().min(0).max(MAX_DEPTH).optional().describe('type url: link steps to follow from the page (default 0: the page alone)'),
      max_pages: z.number().int().min(1).optional().describe('type url: pages to fetch at most (default and most: CNS_INGEST_MAX_PAGES)'),
      same_site: z.boolean().optional().describe('type url: follow links to the same origin only (default true)'),
      config: z.record(z.string(), z.unknown()).optional().describe('platform sources: the connector config'),
    })
    .strict()
    .superRefine((s, ctx) => {
      if (s.type !== 'url') return;
      if (s.url === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'a url source needs url' });
      if (s.config !== undefined) ctx.addIssue({ code: 'custom', path: ['config'], message: 'config is for platform sources; a url source takes url, depth, max_pages, same_site' });
    }),
}).strict();

export const taskParams = z.object({ task_id: id });
export const batchBody = z.object({ task_ids: z.array(id).min(1).max(200) }).strict();
export const listTasksQuery = paginationQuery.extend({
  project_id: id,
  status: z.enum(TASK_STATUSES as [string, ...string[]]).optional(),
});

const progress = z.object({ done: z.number().int(), total: z.number().int(), unit: z.enum(['pages', 'rows', 'bytes']) });
const resultNode = z.object({ path: z.string(), node_id: z.string(), version: z.number().int(), type: z.enum(['markdown', 'json', 'file']) });

export const taskSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  source: z.string().describe('the file name, or the URL (without its query string)'),
  kind: z.enum(['file', 'url', 'platform']),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  path: z.string().describe('the target folder'),
  mode: z.enum(['markdown', 'json', 'raw']).nullable(),
  keep_original: z.boolean(),
  rule_id: z.string().nullable(),
  progress: progress.nullable(),
  result: z
    .object({ nodes: z.array(resultNode), warnings: z.array(z.string()), project_version: z.number().int().nullable() })
    .nullable()
    .describe('once succeeded: every node written (or found already as converted), in one commit'),
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }).nullable(),
  created_by: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});

export const taskList = z.object({ tasks: z.array(taskSchema) });
export const pagedTaskList = z.object({ tasks: z.array(taskSchema), items: itemsSchema(taskSchema, 'tasks'), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
export const batchAnswer = z.object({ tasks: z.array(taskSchema), not_found: z.array(z.string()).describe('ids unknown, or of tasks the caller may not see') });

export const healthSchema = z.object({
  queue: z.object({ queued: z.number().int(), running: z.number().int() }),
  workers: z.object({ size: z.number().int(), busy: z.number().int() }),
  converters: z.object({
    formats: z.array(z.object({ format: z.string(), extensions: z.array(z.string()), modes: z.array(z.string()), available: z.boolean() })),
    ocr: z.boolean(),
    ocr_languages: z.array(z.string()),
    pdf_page_ocr: z.boolean(),
  }),
});

const match = z
  .object({
    extensions: z.array(z.string().min(1).max(32)).max(100).optional(),
    mime_types: z.array(z.string().min(3).max(200)).max(100).optional(),
  })
  .strict()
  .describe('the files the rule applies to when a submission names no rule: extension (without the dot) or media type (`type/*` for all subtypes)');

export const ruleParams = z.object({ rule_id: id });
export const listRulesQuery = z.object({ project_id: id });
export const createRuleBody = z.object({
  project_id: id,
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
  match: match.optional(),
  target: z.enum(['markdown', 'json']).optional().describe('default: json with json_schema, else markdown'),
  json_schema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('a JSON Schema (draft-07, 2019-09 or 2020-12 by its $schema) of an object or array the language model extracts from the converted text'),
  instructions: z.string().max(10_000).optional().describe('for the model that fills json_schema'),
}).strict();

export const ruleSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  description: z.string(),
  match,
  target: z.enum(['markdown', 'json']),
  json_schema: z.record(z.string(), z.unknown()).nullable(),
  instructions: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const ruleList = z.object({ rules: z.array(ruleSchema), total: z.number().int() });
