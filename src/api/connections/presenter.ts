import { redactUrlsIn } from '../../logging/redact.ts';
import { redactedConfig } from '../../platform/connectors/spec.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';

/** A connection without its key hash; `key_prefix` lets a person tell keys apart. */
export function presentConnection(c: ConnectionRecord) {
  return {
    id: c.id,
    project_id: c.project_id,
    kind: c.kind,
    name: redactUrlsIn(c.name),
    scope_path: c.scope_path,
    mode: c.mode,
    status: c.status,
    key_prefix: c.key_prefix,
    // A url sync's address without userinfo or query string (tokens): never shown back whole.
    config: redactedConfig(JSON.parse(c.config) as Record<string, unknown>),
    created_by: c.created_by,
    created_at: c.created_at,
    updated_at: c.updated_at,
    last_used_at: c.last_used_at,
  };
}
