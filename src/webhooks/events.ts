/**
 * The events a webhook may subscribe to. Content events come from the change bus, one per
 * changed node of a commit (a commit is still one delivery: see payload.ts); the others from the
 * sync runtime and the ingestion queue when a run or a task ends.
 */
export const WEBHOOK_EVENTS = [
  'content.created',
  'content.updated',
  'content.deleted',
  'content.moved',
  'content.restored',
  'version.rolled_back',
  'sync.run_finished',
  'ingest.task_finished',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Sent only by `POST …/ping`, whatever the hook subscribed to. */
export const PING_EVENT = 'ping';

export const isWebhookEvent = (name: string): name is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(name);

/**
 * The event of one changed node, by the operation its audit entry records (content/types.ts
 * Operation): a node moved to the trash and one deleted for good are both `content.deleted`
 * (`permanent` tells them apart).
 */
export function eventOfAction(action: string): WebhookEvent | null {
  switch (action) {
    case 'create':
      return 'content.created';
    case 'update':
      return 'content.updated';
    case 'trash':
    case 'delete':
      return 'content.deleted';
    case 'move':
    // Moved out of what the hook may see: for it, the node left (its last path inside is given).
    case 'moved_out':
      return 'content.moved';
    case 'restore':
      return 'content.restored';
    case 'rollback':
      return 'version.rolled_back';
    default:
      return null;
  }
}
