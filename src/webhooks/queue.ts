import type { Db } from '../db/database.ts';
import type { Changelog } from '../events/changelog.ts';
import type { Logger } from '../logging/logger.ts';
import { pathInScope } from '../policies/scope.ts';
import type { DeliveryStore } from './deliveryStore.ts';
import type { HookRecord, HookStore } from './hookStore.ts';
import { newId } from '../util/ids.ts';
import { commitDelivery, eventBody } from './payload.ts';

/** Commits read from the changelog per query while queuing. */
const BATCH = 200;

export interface WebhookQueueDeps {
  db: Db;
  hooks: HookStore;
  deliveries: DeliveryStore;
  changelog: Pick<Changelog, 'latest' | 'commits'>;
  /** The scope of the principal a hook acts as, as it stands now; null once that principal may no longer read the project. */
  scopeOf(hook: HookRecord): string | null;
  maxPaths: () => number;
  /** Called after deliveries were queued (the dispatcher sends them). */
  queued: () => void;
  logger: Logger;
}

/**
 * Turns commits (from the change bus) and finished runs into queued deliveries. The bus calls
 * `notify` on the write path, so nothing is done there: the project is marked and queued on the
 * next turn of the event loop. Each hook's `cursor` moves in the same transaction as its new
 * deliveries, so a crash queues a commit either once or, at the next start, then.
 */
export class WebhookQueue {
  private readonly dirty = new Set<string>();
  private scheduled = false;

  constructor(private readonly d: WebhookQueueDeps) {}

  /** A project's `main` moved (a change bus subscriber). */
  notify(projectId: string): void {
    this.dirty.add(projectId);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Queues what is owed to every hook that is on (start-up: commits a stop left unqueued). */
  catchUp(): void {
    const projects = new Set(this.d.hooks.live().map((h) => h.project_id));
    for (const p of projects) this.queueProject(p);
    this.d.queued();
  }

  /**
   * An event that is not a commit, about `path` ('' : the whole project) of `projectId`: queued
   * for every hook on that subscribed to it and may see that path, after the project's commits
   * not yet queued (so a hook gets them in the order they happened).
   */
  emit(projectId: string, event: string, path: string, data: Record<string, unknown>): void {
    try {
      this.queueProject(projectId);
      for (const hook of this.d.hooks.live(projectId)) {
        if (!hook.events.includes(event)) continue;
        const scope = this.d.scopeOf(hook);
        if (scope === null) {
          this.d.hooks.disable(hook.id, 'creator_access_ended');
          continue;
        }
        if (!pathInScope(scope, path) || !pathInScope(hook.path_prefix, path)) continue;
        const id = newId('dlv');
        this.d.deliveries.insert({ id, hookId: hook.id, event, projectVersion: null, body: eventBody(event, projectId, id, data) });
      }
      this.d.queued();
    } catch (err) {
      this.d.logger.error({ err, project: projectId, event }, 'webhook event could not be queued');
    }
  }

  private flush(): void {
    this.scheduled = false;
    const projects = [...this.dirty];
    this.dirty.clear();
    for (const p of projects) {
      try {
        this.queueProject(p);
      } catch (err) {
        // The cursor did not move: the next commit (or the next start) queues these again.
        this.d.logger.error({ err, project: p }, 'webhook deliveries could not be queued');
      }
    }
    this.d.queued();
  }

  /** Queues every commit after each live hook's cursor. Hooks at the same cursor share the reads. */
  private queueProject(projectId: string): void {
    const latest = this.d.changelog.latest(projectId);
    const behind = this.d.hooks.live(projectId).filter((h) => h.cursor < latest);
    if (behind.length === 0) return;
    const byCursor = new Map<number, HookRecord[]>();
    for (const h of behind) byCursor.set(h.cursor, [...(byCursor.get(h.cursor) ?? []), h]);
    const maxPaths = this.d.maxPaths();
    for (const [start, hooks] of byCursor) {
      const scopes = new Map<string, string>();
      for (const h of hooks) {
        const scope = this.d.scopeOf(h);
        if (scope === null) this.d.hooks.disable(h.id, 'creator_access_ended');
        else scopes.set(h.id, scope);
      }
      let cursor = start;
      while (cursor < latest) {
        const commits = this.d.changelog.commits(projectId, cursor, BATCH);
        if (commits.length === 0) break;
        const upTo = commits[commits.length - 1]!.projectVersion;
        this.d.db.transaction(() => {
          for (const h of hooks) {
            const scope = scopes.get(h.id);
            if (scope === undefined) continue;
            for (const c of commits) {
              const delivery = commitDelivery(projectId, c, { events: h.events, pathPrefix: h.path_prefix, scope, maxPaths });
              if (!delivery) continue;
              const id = newId('dlv');
              this.d.deliveries.insert({ id, hookId: h.id, event: delivery.event, projectVersion: delivery.projectVersion, body: delivery.body(id) });
            }
            this.d.hooks.setCursor(h.id, upTo);
          }
        })();
        cursor = upTo;
        if (commits.length < BATCH) break;
      }
    }
  }
}
