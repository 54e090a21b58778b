import { redactUrl } from '../../logging/redact.ts';
import type { DeliveryRecord } from '../../webhooks/deliveryStore.ts';
import type { HookRecord } from '../../webhooks/hookStore.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A hook as the API shows it: never its secret, and its url without userinfo and with the query
 * shown as `?[redacted]` (a receiver's token may live there), as url syncs show theirs.
 */
export function presentHook(h: HookRecord, pending: number, recent?: DeliveryRecord[]) {
  return {
    id: h.id,
    project_id: h.project_id,
    url: redactUrl(h.url),
    events: h.events,
    path_prefix: h.path_prefix,
    active: h.active,
    state: h.disabled_at ? ('disabled' as const) : h.active ? ('active' as const) : ('inactive' as const),
    disabled_at: h.disabled_at,
    disabled_reason: h.disabled_reason,
    failing_since: iso(h.failing_since),
    created_by: { type: h.creator_kind, id: h.creator_id },
    pending_deliveries: pending,
    created_at: h.created_at,
    updated_at: h.updated_at,
    ...(recent ? { recent_deliveries: recent.map(presentDelivery) } : {}),
  };
}

/** A delivery with what was sent and the start of what came back. */
export function presentDelivery(d: DeliveryRecord) {
  return {
    id: d.id,
    hook_id: d.hook_id,
    event: d.event,
    status: d.status,
    attempts: d.attempts,
    project_version: d.project_version,
    redelivery_of: d.redelivery_of,
    created_at: d.created_at,
    first_attempt_at: iso(d.first_attempt_at),
    last_attempt_at: iso(d.last_attempt_at),
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    duration_ms: d.duration_ms,
    response_status: d.response_status,
    error: d.error,
    request: {
      headers: { 'content-type': 'application/json', 'x-cns-event': d.event, 'x-cns-delivery': d.id },
      body: JSON.parse(d.body) as unknown,
    },
    response: { status: d.response_status, body: d.response_body },
  };
}
