import type { Settings } from '../../config/settings.ts';
import { withItems } from '../../presenters/items.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { Ingest } from '../../ingest/ingest.ts';
import type { IngestRules } from '../../ingest/rules/rules.ts';
import { grantOf } from '../../policies/contentAccess.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { multipartUploads } from '../../http/multipart.ts';
import { presentHealth, presentRule, presentTask } from './presenter.ts';
import * as schema from './schemas.ts';

export interface IngestRouteDeps {
  ingest: { ingest: Ingest; rules: IngestRules };
  /** Upload limits, read at each request. */
  settings: { ingest: Pick<Settings['ingest'], 'maxFileBytes' | 'maxFiles'> };
}

/**
 * Ingestion (spec 4.10, issue 15): files and web pages submitted as tasks of a durable queue
 * that converts them into content nodes (one commit per task, by the submitter), and the ETL
 * rules that say how. Submitting needs content:write with the target folder in the caller's
 * scope; tasks are read with content:read (a scoped key sees the tasks whose folder is in its
 * scope). Submissions answer 202 at once; clients poll the tasks.
 */
export function ingestRoutes(s: IngestRouteDeps): RouteGroup {
  const ingest = () => s.ingest.ingest;
  const rules = () => s.ingest.rules;
  /** A task by id: one of a project the caller cannot see is "Task not found." (so is one outside a key's scope, below). */
  const task = { resource: ({ params }: { params: { task_id: string } }) => ingest().find(params.task_id), name: 'Task' };
  const rule = { resource: ({ params }: { params: { rule_id: string } }) => rules().find(params.rule_id), name: 'Rule' };
  const limits = () => ({ dir: () => ingest().temp.uploadDir(), maxFileBytes: s.settings.ingest.maxFileBytes, maxFiles: s.settings.ingest.maxFiles });
  return {
    prefix: '/ingest',
    tag: 'Ingest',
    routes: [
      route({
        method: 'post',
        path: '/submit/file',
        summary: 'Upload files (multipart/form-data) to convert into content: one task per file (202)',
        description:
          'Fields: project_id, path (target folder), rule_id?, mode?, keep_original?, and one or more file parts. Files are streamed to disk. ' +
          'A file larger than CNS_INGEST_MAX_FILE_BYTES, or more files than CNS_INGEST_MAX_FILES, is 413.',
        permission: 'content:write',
        // The target folder is checked once normalized (422 for a path in the trash comes first).
        authorize: { content: ({ body }) => body.project_id },
        status: 202,
        multipart: multipartUploads(limits),
        body: schema.submitFileBody,
        response: schema.taskList,
        async handle(ctx, { body, access: grant }) {
          const { files, ...options } = body;
          const tasks = await ingest().submitFiles(grant, options, files);
          ok(ctx, { tasks: tasks.map(presentTask) }, `${tasks.length} task${tasks.length === 1 ? '' : 's'} queued`, 202);
        },
      }),
      route({
        method: 'post',
        path: '/submit/saas',
        summary: 'Ingest a web page (and the pages it links to) as one task (202); platform sources are 422 until one can be ingested',
        permission: 'content:write',
        authorize: { content: ({ body }) => body.project_id },
        status: 202,
        body: schema.submitSaasBody,
        response: schema.taskList,
        async handle(ctx, { body, access: grant }) {
          const { source, ...options } = body;
          const task = await ingest().submitSource(grant, options, source);
          ok(ctx, { tasks: [presentTask(task)] }, 'Task queued', 202);
        },
      }),
      route({
        method: 'get',
        path: '/tasks',
        summary: "A project's tasks, newest first, optionally by status",
        permission: 'content:read',
        authorize: { content: ({ query }) => query.project_id },
        query: schema.listTasksQuery,
        response: schema.pagedTaskList,
        async handle(ctx, { query, access: grant }) {
          const page = { limit: query.limit, offset: query.offset };
          const { items, total } = await ingest().list(grant, query.status as never, page);
          ok(ctx, { ...withItems('tasks', items.map(presentTask)), ...pageInfo(total, page) });
        },
      }),
      route({
        method: 'post',
        path: '/tasks/batch',
        summary: 'Several tasks by id; unknown ids and tasks the caller may not see are listed in not_found',
        description: 'Each task needs content:read on its project with its target folder in the caller\'s scope.',
        authorize: { checkedBy: 'the ids may name tasks of any project: each is checked on its own, and those the caller may not see are listed in not_found' },
        body: schema.batchBody,
        response: schema.batchAnswer,
        async handle(ctx, { body }) {
          const { tasks, notFound } = await ingest().tasks(principalOf(ctx), body.task_ids);
          ok(ctx, { tasks: tasks.map(presentTask), not_found: notFound });
        },
      }),
      route({
        method: 'get',
        path: '/tasks/:task_id',
        summary: 'A task: status, progress, result (the nodes written) or error',
        permission: 'content:read',
        authorize: task,
        params: schema.taskParams,
        response: schema.taskSchema,
        handle(ctx, { access }) {
          ok(ctx, presentTask(ingest().visibleTo(grantOf(access, 'content:read'), access.record)));
        },
      }),
      route({
        method: 'delete',
        path: '/tasks/:task_id',
        summary: 'Cancel a task: a queued one never runs, a running one stops and writes nothing (409 once finished)',
        permission: 'content:write',
        authorize: task,
        params: schema.taskParams,
        response: schema.taskSchema,
        async handle(ctx, { access }) {
          ok(ctx, presentTask(await ingest().cancel(grantOf(access, 'content:write'), access.record)), 'Task cancelled');
        },
      }),
      route({
        method: 'get',
        path: '/health',
        summary: 'Queue depth, busy workers and the converters this installation has (OCR data present, …)',
        authorize: { signedIn: "this server's queue and converters; nothing of any project" },
        response: schema.healthSchema,
        async handle(ctx) {
          ok(ctx, presentHealth(await ingest().health()));
        },
      }),
      route({
        method: 'get',
        path: '/rules',
        summary: "A project's ETL rules, in the order they are matched",
        permission: 'content:read',
        authorize: { project: ({ query }) => query.project_id },
        query: schema.listRulesQuery,
        response: schema.ruleList,
        async handle(ctx, { query }) {
          const list = await rules().list(query.project_id);
          ok(ctx, { rules: list.map(presentRule), total: list.length });
        },
      }),
      route({
        method: 'post',
        path: '/rules',
        summary: 'Create an ETL rule; one with json_schema has the language model extract JSON (422 when no provider is configured)',
        permission: 'content:write',
        authorize: { content: ({ body }) => body.project_id },
        status: 201,
        body: schema.createRuleBody,
        response: schema.ruleSchema,
        async handle(ctx, { body, access: grant }) {
          ok(ctx, presentRule(await rules().create(grant, body)), 'Rule created', 201);
        },
      }),
      route({
        method: 'get',
        path: '/rules/:rule_id',
        summary: 'Read a rule',
        permission: 'content:read',
        authorize: rule,
        params: schema.ruleParams,
        response: schema.ruleSchema,
        handle(ctx, { access }) {
          ok(ctx, presentRule(access.record));
        },
      }),
      route({
        method: 'delete',
        path: '/rules/:rule_id',
        summary: 'Delete a rule (tasks already queued with it fail: rule_deleted)',
        permission: 'content:write',
        authorize: rule,
        params: schema.ruleParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await rules().delete(grantOf(access, 'content:write'), access.record);
          ok(ctx, presentDeleted(params.rule_id), 'Rule deleted');
        },
      }),
    ],
  };
}
