import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { Changelog } from '../events/changelog.ts';
import type { Logger } from '../logging/logger.ts';
import { pathInScope } from '../policies/scope.ts';
import type { DeliveryStore, NewDelivery } from './deliveryStore.ts';
import type { HookRecord, HookStore } from './hookStore.ts';
import { newId } from '../util/ids.ts';
import { commitDelivery, eventBody } from './payload.ts';

/** Commits read from the changelog per query while queuing. */
const BATCH = 200;

export interface WebhookQueueDeps {
  metadata: MetadataStore;
  hooks: HookStore;
  deliveries: DeliveryStore;
  changelog: Pick<Changelog, 'latest' | 'commits'>;
  /**
   * The scope of the principal a hook acts as, as it stands now; null once that principal may no
   * longer read the project. Asked outside any metadata transaction (it reads the metadata store).
   */
  scopeOf(hook: HookRecord): string | null | Promise<string | null>;
  maxPaths: () => number;
  /** Commits read per changelog query (default BATCH). */
  batch?: () => number | undefined;
  /** Called after deliveries were queued (the dispatcher sends them). */
  queued: () => void;
  logger: Logger;
}

/** Lets other requests run between two batches of a long backlog. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Turns commits (from the change bus) and finished runs into queued deliveries. The bus calls
 * `notify` on the write path, so nothing is done there: the work starts on a later turn of the
 * event loop. A project's work runs in order, one piece at a time (commits, then an event that
 * came after them), and a long backlog (a start-up after many commits, a push of thousands) is
 * queued BATCH commits at a time with the event loop free between batches. Each hook's `cursor`
 * moves in the same transaction as its new deliveries, so a crash queues a commit either once
 * or, at the next start, then; it moves by compare-and-swap, so two processes queuing one
 * project (an owner handing it over) queue each commit once.
 */
export class WebhookQueue {
  /** Per project, the last piece of work queued: the next one runs after it. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Projects with a commit notice waiting to run (more notices before it starts add nothing). */
  private readonly noticed = new Set<string>();
  /** Catch-ups still reading which hooks are on (a stop waits for them too). */
  private readonly catchingUp = new Set<Promise<void>>();

  constructor(private readonly d: WebhookQueueDeps) {}

  /** A project's `main` moved (a change bus subscriber). */
  notify(projectId: string): void {
    if (this.noticed.has(projectId)) return;
    this.noticed.add(projectId);
    void this.inOrder(projectId, 'webhook deliveries could not be queued', async () => {
      this.noticed.delete(projectId);
      await this.queueProject(projectId);
    });
  }

  /**
   * Queues what is owed to every hook that is on (start-up: commits a stop left unqueued);
   * `here`: only hooks of projects this process queues for (several workers: those it owns).
   */
  catchUp(here: (projectId: string) => boolean = () => true): Promise<void> {
    const done = this.d.hooks
      .live()
      .then((live) => {
        const projects = new Set(live.map((h) => h.project_id).filter((p) => here(p)));
        return Promise.all([...projects].map((p) => this.inOrder(p, 'webhook deliveries could not be queued', () => this.queueProject(p))));
      })
      .then(
        () => undefined,
        (err: unknown) => this.d.logger.error({ err }, 'webhook deliveries could not be queued'),
      );
    this.catchingUp.add(done);
    void done.finally(() => this.catchingUp.delete(done));
    return done;
  }

  /** Resolves once every piece of work queued so far is done (a stop waits for it). */
  idle(): Promise<void> {
    return Promise.all([...this.catchingUp, ...this.chains.values()]).then(() => undefined);
  }

  /**
   * An event that is not a commit, about `path` ('' : the whole project) of `projectId`: queued
   * for every hook on that subscribed to it and may see that path, after the project's commits
   * not yet queued (so a hook gets them in the order they happened).
   */
  emit(projectId: string, event: string, path: string, data: Record<string, unknown>): void {
    void this.inOrder(projectId, 'webhook event could not be queued', async () => {
      await this.queueProject(projectId);
      for (const hook of await this.d.hooks.live(projectId)) {
        if (!hook.events.includes(event)) continue;
        const scope = await this.d.scopeOf(hook);
        if (scope === null) {
          await this.d.hooks.disable(hook.id, 'creator_access_ended');
          continue;
        }
        if (!pathInScope(scope, path) || !pathInScope(hook.path_prefix, path)) continue;
        const id = newId('dlv');
        await this.d.deliveries.insert({ id, hookId: hook.id, event, projectVersion: null, body: eventBody(event, projectId, id, data) });
      }
    });
  }

  /** Runs `work` after the project's earlier work, on a later turn of the event loop; a failure is logged (the cursor did not move: it is queued again later). */
  private inOrder(projectId: string, failure: string, work: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(projectId) ?? Promise.resolve())
      .then(yieldToEventLoop)
      .then(work)
      .catch((err: unknown) => this.d.logger.error({ err, project: projectId }, failure))
      .then(() => this.d.queued());
    this.chains.set(projectId, next);
    void next.then(() => {
      if (this.chains.get(projectId) === next) this.chains.delete(projectId);
    });
    return next;
  }

  /** Queues every commit after each live hook's cursor, BATCH commits at a time. Hooks at the same cursor share the reads. */
  private async queueProject(projectId: string): Promise<void> {
    const latest = this.d.changelog.latest(projectId);
    const behind = (await this.d.hooks.live(projectId)).filter((h) => h.cursor < latest);
    if (behind.length === 0) return;
    const byCursor = new Map<number, HookRecord[]>();
    for (const h of behind) byCursor.set(h.cursor, [...(byCursor.get(h.cursor) ?? []), h]);
    const maxPaths = this.d.maxPaths();
    for (const [start, hooks] of byCursor) {
      const scopes = new Map<string, string>();
      for (const h of hooks) {
        const scope = await this.d.scopeOf(h);
        if (scope === null) await this.d.hooks.disable(h.id, 'creator_access_ended');
        else scopes.set(h.id, scope);
      }
      let cursor = start;
      while (cursor < latest) {
        const batch = this.d.batch?.() ?? BATCH;
        const commits = this.d.changelog.commits(projectId, cursor, batch);
        if (commits.length === 0) break;
        const upTo = commits[commits.length - 1]!.projectVersion;
        const from = cursor;
        // Each hook's deliveries of the batch, built before the transaction (it awaits only its own statements).
        const owed = new Map<string, NewDelivery[]>();
        for (const h of hooks) {
          const scope = scopes.get(h.id);
          if (scope === undefined) continue;
          const rows: NewDelivery[] = [];
          for (const c of commits) {
            const delivery = commitDelivery(projectId, c, { events: h.events, pathPrefix: h.path_prefix, scope, maxPaths });
            if (!delivery) continue;
            const id = newId('dlv');
            rows.push({ id, hookId: h.id, event: delivery.event, projectVersion: delivery.projectVersion, body: delivery.body(id) });
          }
          owed.set(h.id, rows);
        }
        const stale = await this.d.metadata.transaction(async (trx) => {
          const moved: string[] = [];
          for (const [hookId, rows] of owed) {
            // Moved meanwhile (another process queued these commits, or the hook was switched on again): not queued twice.
            if (!(await this.d.hooks.moveCursor(hookId, from, upTo, trx))) {
              moved.push(hookId);
              continue;
            }
            await this.d.deliveries.insertAll(rows, trx);
          }
          return moved;
        });
        for (const hookId of stale) scopes.delete(hookId);
        cursor = upTo;
        if (commits.length < batch || scopes.size === 0) break;
        // A long backlog: what is queued can be sent meanwhile, and other requests go on.
        this.d.queued();
        await yieldToEventLoop();
      }
    }
  }
}
