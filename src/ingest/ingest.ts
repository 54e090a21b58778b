import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Principal } from '../auth/principal.ts';
import type { ContentStore } from '../content/contentStore.ts';
import { isTrashPath, normalizePath, TRASH_DIR } from '../content/paths.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { Page, Paged } from '../domain/pagination.ts';
import { redactUrl } from '../logging/redact.ts';
import { checkDestination, isRefusal } from '../net/outboundGuard.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';
import { newId, nowIso } from '../util/ids.ts';
import { formats, type FormatsInfo } from './converters/index.ts';
import type { IngestMode } from './converters/converter.ts';
import type { IngestQueue } from './queue/ingestQueue.ts';
import type { NewTask, TaskStore } from './queue/taskStore.ts';
import type { TaskRecord, TaskStatus } from './queue/taskTypes.ts';
import type { IngestTemp } from './queue/tempFiles.ts';
import type { RuleRecord } from './rules/ruleStore.ts';
import type { IngestRules } from './rules/rules.ts';
import { platformSourceError, type SyncConnectorLookup } from './sources.ts';
import type { ConversionPool } from './worker/conversionPool.ts';

/** A file of a multipart submission, already on disk. */
export interface UploadedFile {
  /** The name the client gave it. */
  name: string;
  /** Where it was streamed to. */
  path: string;
  size: number;
  mimeType: string | null;
}

export interface SubmitOptions {
  project_id: string;
  /** The target folder ('' the root). */
  path: string;
  rule_id?: string;
  mode?: IngestMode;
}

export interface UrlSource {
  url?: string;
  depth?: number;
  max_pages?: number;
  same_site?: boolean;
}

export interface IngestHealth {
  queue: { queued: number; running: number };
  workers: { size: number; busy: number };
  converters: FormatsInfo;
}

export interface IngestDeps {
  store: TaskStore;
  queue: IngestQueue;
  rules: IngestRules;
  access: Pick<ContentAccess, 'grant' | 'mayPath' | 'requirePath'>;
  /** A source type that names a sync connector, to say so when it is submitted. */
  syncConnector: SyncConnectorLookup;
  content: ContentStore;
  temp: IngestTemp;
  pool: ConversionPool;
  /** The most pages one URL submission may fetch (CNS_INGEST_MAX_PAGES). */
  maxPages: number;
  allowPrivate: () => boolean;
}

/** Link steps a crawl may follow (max_pages bounds the work; this bounds the wait for it). */
export const MAX_DEPTH = 5;

const notFound = () => new DomainError('NOT_FOUND', 'Task not found.');
const SOURCE_FILE = 'source';

/**
 * Ingestion as its callers see it (spec 4.10): submissions become queued tasks, and tasks are
 * read, listed and cancelled. Submitting needs content:write on the project with the target
 * folder inside the caller's scope; reading a task needs content:read with its target folder in
 * scope (others' tasks outside the scope are not found); cancelling needs content:write. The
 * grant on the project comes from the route's check; the folder is checked here.
 */
export class Ingest {
  constructor(private readonly d: IngestDeps) {}

  get temp(): IngestTemp {
    return this.d.temp;
  }

  /** One task per file; the files move into the tasks' temporary folders. All are queued or none. */
  async submitFiles(g: ContentGrant, o: SubmitOptions & { keep_original: boolean }, files: UploadedFile[]): Promise<TaskRecord[]> {
    const { target } = this.target(g, o.path);
    const rule = await this.namedRule(o);
    const now = nowIso();
    const tasks: NewTask[] = [];
    // Start-up's sweep of task folders is over before a task's file is placed.
    await this.d.queue.ready();
    try {
      for (const f of files) {
        const id = newId('ing');
        await rename(f.path, join(this.d.temp.ensureTaskDir(id), SOURCE_FILE));
        // The rule that applies is decided now, and shown on the task.
        const ruleId = rule?.id ?? (o.mode ? null : ((await this.d.rules.match(o.project_id, f.name, f.mimeType))?.id ?? null));
        const input = { file: SOURCE_FILE, size: f.size, mime_type: f.mimeType };
        tasks.push(this.newTask(g, { id, kind: 'file', source: f.name, target, o, ruleId, now, input, keepOriginal: o.keep_original }));
      }
      await this.d.store.insert(tasks);
    } catch (e) {
      await Promise.all(tasks.map((t) => this.d.temp.removeTask(t.id)));
      throw e;
    }
    this.d.queue.pump();
    return await this.d.store.findMany(tasks.map((t) => t.id));
  }

  /** One task for the page and the pages it links to; platform sources are refused with the supported types. */
  async submitSource(g: ContentGrant, o: SubmitOptions & { keep_original: boolean }, source: { type: string; config?: Record<string, unknown> } & UrlSource): Promise<TaskRecord> {
    if (source.type !== 'url') throw platformSourceError(source.type, this.d.syncConnector);
    const { target } = this.target(g, o.path);
    const rule = await this.namedRule(o);
    const maxPages = source.max_pages ?? this.d.maxPages;
    if (maxPages > this.d.maxPages) throw invalidField('source.max_pages', `max_pages may be at most ${this.d.maxPages} (CNS_INGEST_MAX_PAGES)`);
    try {
      await checkDestination(source.url ?? '', this.d.allowPrivate());
    } catch (e) {
      if (isRefusal(e)) throw invalidField('source.url', `this address may not be fetched: ${e.message}`);
      throw e;
    }
    const task = this.newTask(g, {
      id: newId('ing'),
      kind: 'url',
      source: redactUrl(source.url!),
      target,
      o,
      ruleId: rule?.id ?? null,
      now: nowIso(),
      input: { url: source.url!, depth: source.depth ?? 0, max_pages: maxPages, same_site: source.same_site ?? true },
      keepOriginal: o.keep_original,
    });
    await this.d.store.insert([task]);
    this.d.queue.pump();
    return (await this.d.store.find(task.id))!;
  }

  /** A task by id, whoever asks (a route's check is made on its project). */
  async find(id: string): Promise<TaskRecord | null> {
    return await this.d.store.find(id);
  }

  /** The task, if `g` (a grant on its project) reaches its target folder; else "Task not found." */
  visibleTo(g: ContentGrant, task: TaskRecord): TaskRecord {
    if (task.project_id !== g.projectId || !this.d.access.mayPath(g, task.target_path)) throw notFound();
    return task;
  }

  /**
   * The tasks the caller may see, in the order asked; the others (unknown, or not theirs to see)
   * by id. The ids may name tasks of any project: each is checked on its own.
   */
  async tasks(principal: Principal, ids: string[]): Promise<{ tasks: TaskRecord[]; notFound: string[] }> {
    const tasks: TaskRecord[] = [];
    const missing: string[] = [];
    const found = new Map((await this.d.store.findMany(ids)).map((t) => [t.id, t]));
    for (const id of ids) {
      try {
        tasks.push(await this.visible(principal, found.get(id) ?? null));
      } catch (e) {
        if ((e as { code?: unknown }).code === 'NOT_FOUND') missing.push(id);
        else throw e;
      }
    }
    return { tasks, notFound: missing };
  }

  /** The project's tasks `g` (content:read on the project) may see (target folder in its scope), newest first. */
  async list(g: ContentGrant, status: TaskStatus | undefined, page: Page): Promise<Paged<TaskRecord>> {
    const visible = (await this.d.store.summaries(g.projectId, status)).filter((t) => this.d.access.mayPath(g, t.target_path));
    const items = await this.d.store.findMany(visible.slice(page.offset, page.offset + page.limit).map((t) => t.id));
    return { items, total: visible.length };
  }

  /**
   * Cancels a queued or running task (409 when it has finished). A running task is stopped
   * before this answers, and wrote nothing.
   */
  async cancel(g: ContentGrant, task: TaskRecord): Promise<TaskRecord> {
    const id = this.visibleTo(g, task).id;
    if (!(await this.d.queue.cancel(id))) {
      const now = (await this.d.store.find(id))!;
      throw new DomainError('CONFLICT', `The task has already ${now.status === 'cancelled' ? 'been cancelled' : now.status}.`, { status: now.status });
    }
    await this.d.queue.settled(task.id);
    return (await this.d.store.find(id))!;
  }

  async health(): Promise<IngestHealth> {
    const pool = this.d.pool.stats();
    return {
      queue: { queued: await this.d.store.count('queued'), running: await this.d.store.count('running') },
      workers: { size: pool.size, busy: this.d.queue.stats().running },
      converters: formats(),
    };
  }

  /** The target folder: inside the caller's write scope, not in the trash, and not a node other than a folder. */
  private target(g: ContentGrant, path: string): { target: string } {
    const target = normalizePath(path, 'path');
    if (target === TRASH_DIR || isTrashPath(target)) throw invalidField('path', `path may not be inside ${TRASH_DIR}`);
    this.d.access.requirePath(g, target);
    const node = target === '' ? null : this.d.content.findByPath(g.projectId, target);
    if (node && node.type !== 'folder') throw new DomainError('CONFLICT', `${target} is a ${node.type} node, not a folder.`, { path: target });
    return { target };
  }

  /** The rule a submission names, and a mode that agrees with it. */
  private async namedRule(o: SubmitOptions): Promise<RuleRecord | null> {
    if (!o.rule_id) return null;
    const rule = await this.d.rules.forSubmission(o.project_id, o.rule_id);
    if (o.mode && o.mode !== rule.target) throw invalidField('mode', `rule ${rule.id} writes ${rule.target}: leave mode out or make it ${rule.target}`);
    return rule;
  }

  private newTask(
    g: ContentGrant,
    t: { id: string; kind: 'file' | 'url'; source: string; target: string; o: SubmitOptions; ruleId: string | null; now: string; input: NewTask['input']; keepOriginal: boolean },
  ): NewTask {
    return {
      id: t.id,
      project_id: t.o.project_id,
      source: t.source,
      kind: t.kind,
      target_path: t.target,
      mode: t.o.mode ?? null,
      keep_original: t.keepOriginal,
      rule_id: t.ruleId,
      input: t.input,
      created_by: g.principal.id,
      actor: g.actor,
      created_at: t.now,
    };
  }

  /** A task of any project the caller may read (404 when it may not, or when it is not there). */
  private async visible(principal: Principal, task: TaskRecord | null): Promise<TaskRecord> {
    if (!task) throw notFound();
    let g: ContentGrant;
    try {
      g = await this.d.access.grant(principal, task.project_id, 'content:read');
    } catch (e) {
      if ((e as { code?: unknown }).code === 'NOT_FOUND') throw notFound();
      throw e;
    }
    return this.visibleTo(g, task);
  }
}
