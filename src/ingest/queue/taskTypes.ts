import type { IngestMode, Progress } from '../converters/converter.ts';
import type { Actor } from '../../content/types.ts';

export type TaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type TaskKind = 'file' | 'url' | 'platform';

export const TASK_STATUSES: readonly TaskStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
export const isFinished = (status: TaskStatus): boolean => status === 'succeeded' || status === 'failed' || status === 'cancelled';

/** An uploaded file waiting in the task's temporary folder. */
export interface FileInput {
  /** The file's name inside the task's temporary folder. */
  file: string;
  size: number;
  mime_type: string | null;
}

/** A web page and how far to follow its links. */
export interface UrlInput {
  url: string;
  depth: number;
  max_pages: number;
  same_site: boolean;
}

export type TaskInput = FileInput | UrlInput;

/** One node a task wrote (or found unchanged: ingesting the same file twice makes no new version). */
export interface ResultNode {
  path: string;
  node_id: string;
  version: number;
  type: 'markdown' | 'json' | 'file';
}

export interface TaskResult {
  nodes: ResultNode[];
  warnings: string[];
  /** The project version of the task's commit; null when everything was already as converted. */
  project_version: number | null;
}

export interface TaskError {
  code: string;
  message: string;
  details?: unknown;
}

export interface TaskRecord {
  id: string;
  project_id: string;
  /** The uploaded file's name, or the URL. */
  source: string;
  kind: TaskKind;
  status: TaskStatus;
  /** The folder results go to ('' is the project root). */
  target_path: string;
  /** The mode asked for; null: the rule's target, else each format's default (Markdown; JSON rows plus a Markdown preview for tables). */
  mode: IngestMode | null;
  keep_original: boolean;
  rule_id: string | null;
  input: TaskInput;
  progress: Progress | null;
  result: TaskResult | null;
  error: TaskError | null;
  /** The submitting user's or key's id. */
  created_by: string;
  /** What the versions the task writes record. */
  actor: Actor;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}
