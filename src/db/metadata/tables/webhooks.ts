import type { Generated } from 'kysely';

/** Outgoing webhooks (migration 024): src/webhooks/. */
export interface WebhooksTables {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

/** A project's hook; it acts as its creator. Times in ms since the epoch are numbers, the others ISO text. */
export interface WebhooksTable {
  id: string;
  project_id: string;
  url: string;
  /** JSON array of event names. */
  events: string;
  path_prefix: string;
  /** 1 on, 0 off. */
  active: number;
  secret_sealed: string;
  creator_kind: 'user' | 'key';
  creator_id: string;
  /** The project commit number up to which its deliveries were queued. */
  cursor: number;
  failing_since: number | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** A hook's deliveries: the queue (pending rows, in `seq` order per hook) and the log. */
export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  id: string;
  hook_id: string;
  event: string;
  project_version: number | null;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: number;
  first_attempt_at: number | null;
  last_attempt_at: number | null;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number | null;
  error: string | null;
  redelivery_of: string | null;
  created_at: string;
}
