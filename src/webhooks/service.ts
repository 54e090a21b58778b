import type { Authenticator } from '../auth/authenticator.ts';
import { SecretBox } from '../auth/secretBox.ts';
import type { Settings } from '../config/settings.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import type { ChangeBus } from '../events/changeBus.ts';
import type { Changelog } from '../events/changelog.ts';
import type { IngestQueue } from '../ingest/queue/ingestQueue.ts';
import type { Logger } from '../logging/logger.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import type { SyncStore } from '../sync/syncStore.ts';
import { DeliveryStore } from './deliveryStore.ts';
import { Dispatcher } from './dispatcher.ts';
import { HookStore, type HookRecord } from './hookStore.ts';
import { WebhookQueue } from './queue.ts';
import type { Attempt } from './sender.ts';
import type { AttemptOutcome } from './deliveryStore.ts';
import { Webhooks } from './webhooks.ts';

export interface WebhooksService {
  /** Managing hooks (the routes, the CLI through them). */
  webhooks: Webhooks;
  queue: WebhookQueue;
  dispatcher: Dispatcher;
  /**
   * Starts queuing from the change bus (and finished sync runs and ingestion tasks) and sending.
   * Called by every process (src/app/server.ts): with several workers each queues the commits
   * it made (the bus's owner-only subscription) and sends the deliveries of the projects it owns.
   */
  start(): void;
  stop(): Promise<void>;
}

export interface WebhooksDeps {
  metadata: MetadataStore;
  settings: Settings;
  logger: Logger;
  signingSecret: Uint8Array;
  changelog: Changelog;
  bus: ChangeBus;
  authenticator: Pick<Authenticator, 'current'>;
  access: Pick<ContentAccess, 'grant'>;
  connections: Pick<AccessConnectionStore, 'find'>;
  syncStore: Pick<SyncStore, 'onRunFinished'>;
  ingestQueue: Pick<IngestQueue, 'onFinished'>;
  /** One attempt (tests may wrap it). */
  send?: (a: Attempt) => Promise<AttemptOutcome>;
  /**
   * Several workers (issue 29): a project's deliveries are queued and sent by the process that
   * owns it; a project taken over gets its backlog queued and its pending deliveries sent.
   * Absent: every project's, as the one process.
   */
  ownership?: { alone: boolean; adopt(projectId: string): boolean; onAcquired(listener: (projectId: string) => void): () => void };
}

/** Several workers: how often the dispatcher looks for deliveries another process queued or left. */
const DISPATCH_POLL_MS = 1000;

export function createWebhooks(d: WebhooksDeps): WebhooksService {
  const hooks = new HookStore(d.metadata);
  const deliveries = new DeliveryStore(d.metadata);
  const box = new SecretBox(d.signingSecret, 'webhooks');
  const settings = () => d.settings.webhooks;
  const allowPrivate = () => d.settings.urlFetchAllowPrivate;
  const o = d.ownership && !d.ownership.alone ? d.ownership : null;
  const adopt = o ? (projectId: string) => o.adopt(projectId) : undefined;
  const dispatcher = new Dispatcher({ hooks, deliveries, box, settings, allowPrivate, logger: d.logger, send: d.send, ...(o && { adopt, pollMs: DISPATCH_POLL_MS }) });
  // A hook acts as its creator, as the creator stands now: a revoked key or a removed member hears nothing more.
  const scopeOf = async (hook: HookRecord): Promise<string | null> => {
    const principal = await d.authenticator.current({ kind: hook.creator_kind, id: hook.creator_id });
    if (!principal) return null;
    try {
      return (await d.access.grant(principal, hook.project_id, 'content:read')).scope;
    } catch {
      return null;
    }
  };
  const queue = new WebhookQueue({ metadata: d.metadata, hooks, deliveries, changelog: d.changelog, scopeOf, maxPaths: () => settings().maxPaths, batch: () => settings().queueBatch, queued: () => dispatcher.kick(), logger: d.logger });
  const webhooks = new Webhooks({ hooks, deliveries, box, changelog: d.changelog, allowPrivate, timeoutMs: () => settings().timeoutMs, kick: () => dispatcher.kick(), send: d.send });
  const stops: (() => void)[] = [];
  return {
    webhooks,
    queue,
    dispatcher,
    start() {
      stops.push(d.bus.subscribe('webhooks', (e) => queue.notify(e.project), { local: true }));
      stops.push(
        // The sync's scope is read from its connection first; a failure to read it loses this one event, said in the log.
        d.syncStore.onRunFinished((run) => {
          d.connections
            .find(run.sync_id)
            .then((connection) => {
              const scope = connection?.scope_path ?? '';
              queue.emit(run.project_id, 'sync.run_finished', scope, {
                sync: { id: run.sync_id, scope_path: scope },
                run: {
                  id: run.id,
                  trigger: run.trigger,
                  status: run.status,
                  started_at: run.started_at,
                  finished_at: run.finished_at,
                  project_version: run.cursor_to,
                  files_up: run.files_up,
                  files_down: run.files_down,
                  errors: JSON.parse(run.errors) as string[],
                },
              });
            })
            .catch((err: unknown) => d.logger.warn({ err, sync: run.sync_id }, 'could not announce a finished sync run'));
        }),
      );
      stops.push(
        d.ingestQueue.onFinished((task) =>
          queue.emit(task.project_id, 'ingest.task_finished', task.target_path, {
            task: {
              id: task.id,
              kind: task.kind,
              source: task.source,
              status: task.status,
              target_path: task.target_path,
              finished_at: task.finished_at,
              project_version: task.result?.project_version ?? null,
              error: task.error ? { code: task.error.code, message: task.error.message } : null,
            },
            actor: { type: task.actor.type, id: task.actor.id, author: task.actor.author },
          }),
        ),
      );
      if (o) {
        stops.push(
          o.onAcquired((projectId) => {
            queue.notify(projectId);
            dispatcher.kick();
          }),
        );
      }
      void queue.catchUp(adopt);
      dispatcher.start();
    },
    async stop() {
      for (const s of stops.splice(0)) s();
      await queue.idle();
      await dispatcher.stop();
    },
  };
}
