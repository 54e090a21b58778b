import { presentActor, type CommitChanges } from '../events/changelog.ts';
import { scopedCommit } from '../events/scopedChanges.ts';
import { WEBHOOK_EVENTS, eventOfAction, type WebhookEvent } from './events.ts';

/** What a hook is sent of one commit: the changes it may see and subscribed to, or null. */
export interface CommitDelivery {
  event: WebhookEvent;
  projectVersion: number;
  /** Builds the body once the delivery has its id. */
  body(deliveryId: string): string;
}

export interface HookView {
  events: readonly string[];
  pathPrefix: string;
  /** The scope of the principal the hook acts as ('' = the whole project). */
  scope: string;
  maxPaths: number;
}

/**
 * One commit as one delivery for a hook: the changes inside both the creator's scope and the
 * hook's path_prefix (a change that crosses the border is shown as scopedChanges shows it, no
 * path outside leaks), of the events the hook subscribed to. `event` is the first of `events`
 * in the order of WEBHOOK_EVENTS; each path carries its own. Paths past `maxPaths` are counted,
 * not listed.
 */
export function commitDelivery(projectId: string, commit: CommitChanges, hook: HookView): CommitDelivery | null {
  const inScope = scopedCommit(hook.scope, commit);
  const seen = inScope && scopedCommit(hook.pathPrefix, inScope);
  if (!seen) return null;
  const wanted = new Set(hook.events);
  const changes = seen.changes
    .map((c) => ({ c, event: eventOfAction(c.action) }))
    .filter((x): x is { c: typeof x.c; event: WebhookEvent } => x.event !== null && wanted.has(x.event));
  if (changes.length === 0) return null;
  const kinds = new Set(changes.map((x) => x.event));
  const events = WEBHOOK_EVENTS.filter((e) => kinds.has(e));
  const listed = changes.slice(0, hook.maxPaths);
  return {
    event: events[0]!,
    projectVersion: commit.projectVersion,
    body: (deliveryId) =>
      JSON.stringify({
        event: events[0],
        events,
        project_id: projectId,
        delivery_id: deliveryId,
        occurred_at: commit.createdAt,
        commit: { id: commit.commitId, project_version: commit.projectVersion, message: seen.message },
        actor: presentActor(commit.actor),
        paths: listed.map(({ c, event }) => ({
          path: c.path,
          old_path: c.oldPath,
          event,
          operation: c.action,
          node_id: c.nodeId,
          node_type: c.nodeType,
          version: c.version,
        })),
        paths_total: changes.length,
        paths_truncated: changes.length > listed.length,
      }),
  };
}

/** A body that is not a commit (a finished sync run or ingestion task, a ping). */
export function eventBody(event: string, projectId: string, deliveryId: string, data: Record<string, unknown>, at = new Date()): string {
  return JSON.stringify({ event, events: [event], project_id: projectId, delivery_id: deliveryId, occurred_at: at.toISOString(), ...data });
}

/** The same body under a new delivery id (a redelivery). */
export function withDeliveryId(body: string, deliveryId: string, redeliveryOf: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify({ ...parsed, delivery_id: deliveryId, redelivery_of: redeliveryOf });
}
