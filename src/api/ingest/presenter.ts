import type { IngestHealth } from '../../ingest/ingest.ts';
import type { TaskRecord } from '../../ingest/queue/taskTypes.ts';
import type { RuleRecord } from '../../ingest/rules/ruleStore.ts';

/** A task as clients see it: its input (a temporary file, or the full URL with any token in it) stays inside. */
export const presentTask = (t: TaskRecord) => ({
  id: t.id,
  project_id: t.project_id,
  source: t.source,
  kind: t.kind,
  status: t.status,
  path: t.target_path,
  mode: t.mode,
  keep_original: t.keep_original,
  rule_id: t.rule_id,
  progress: t.progress,
  result: t.result,
  error: t.error,
  created_by: t.created_by,
  created_at: t.created_at,
  started_at: t.started_at,
  finished_at: t.finished_at,
});

export const presentRule = (r: RuleRecord) => ({
  id: r.id,
  project_id: r.project_id,
  name: r.name,
  description: r.description,
  match: r.match,
  target: r.target,
  json_schema: r.json_schema,
  instructions: r.instructions,
  created_by: r.created_by,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const presentHealth = (h: IngestHealth) => ({
  queue: h.queue,
  workers: h.workers,
  converters: {
    formats: h.converters.formats,
    ocr: h.converters.ocr,
    ocr_languages: h.converters.ocrLanguages,
    pdf_page_ocr: h.converters.pdfPageOcr,
  },
});
