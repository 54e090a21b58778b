import { redactUrlsIn } from '../../logging/redact.ts';
import { API_PREFIX } from '../../config/apiPrefix.ts';
import { redactedConfig } from '../../platform/connectors/spec.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import { presentActor, type ChangeEntry } from '../../events/changelog.ts';
import type { PullEntry } from '../../sync/pullSet.ts';
import type { SyncRunRecord, SyncStateRecord } from '../../sync/syncRecords.ts';

export function presentSync(state: SyncStateRecord, c: ConnectionRecord, baseUrl = '') {
  return {
    id: state.sync_id,
    project_id: state.project_id,
    provider: state.provider,
    name: redactUrlsIn(c.name),
    scope_path: c.scope_path,
    status: state.status,
    pause_reason: state.status === 'paused' ? state.pause_reason : null,
    trigger_mode: state.trigger_mode,
    interval_s: state.interval_s,
    next_run_at: state.trigger_mode === 'interval' ? state.next_run_at : null,
    webhook_url: state.trigger_mode === 'webhook' ? `${baseUrl.replace(/\/+$/, '')}${API_PREFIX}/sync/webhooks/${state.sync_id}` : null,
    acked_cursor: state.acked_cursor,
    last_run_at: state.last_run_at,
    key_prefix: c.key_prefix,
    // A url sync's address without userinfo or query string (tokens): never shown back whole.
    config: redactedConfig(JSON.parse(c.config) as Record<string, unknown>),
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

export function presentRun(r: SyncRunRecord) {
  const errors = JSON.parse(r.errors) as string[];
  return {
    id: r.id,
    sync_id: r.sync_id,
    project_id: r.project_id,
    trigger: r.trigger,
    status: r.status,
    started_at: r.started_at,
    finished_at: r.finished_at,
    cursor_from: r.cursor_from,
    cursor_to: r.cursor_to,
    files_up: r.files_up,
    files_down: r.files_down,
    conflicts: JSON.parse(r.conflicts) as string[],
    errors,
    pulled: { created: r.pulled_created, updated: r.pulled_updated, deleted: r.pulled_deleted },
    pushed: r.files_up,
    cursor_before: r.cursor_before,
    cursor_after: r.cursor_after,
    error: r.status === 'failed' || r.status === 'interrupted' ? (errors[0] ?? null) : null,
    http_calls: r.http_calls,
    rate_limited_ms: r.rate_limited_ms,
  };
}

export function presentChange(e: ChangeEntry) {
  return {
    project_version: e.projectVersion,
    node_id: e.nodeId,
    path: e.path,
    old_path: e.oldPath,
    // A rollback writes a new version of the node: an `update` to clients that know only
    // create/update/delete (PuppyOne's); `operation` keeps what it was.
    action: e.action === 'rollback' ? 'update' : e.action,
    operation: e.action,
    node_type: e.nodeType,
    version: e.version,
    actor: presentActor(e.actor),
    created_at: e.createdAt,
  };
}

export function presentPullEntry(e: PullEntry, content: Buffer | null, scopePath: string) {
  return {
    action: e.action,
    node_id: e.nodeId,
    node_type: e.nodeType,
    path: e.path,
    version: e.version,
    content_hash: e.contentHash,
    size: e.size,
    ...(content ? { content: content.toString('base64') } : {}),
    // PuppyOne's names: the path inside the synced folder, the version, and json/markdown content decoded
    external_resource_id: scopePath === '' ? e.path : e.path.slice(scopePath.length + 1),
    current_version: e.version,
    ...(content && e.action !== 'delete' && e.nodeType === 'json' ? { content_json: JSON.parse(content.toString('utf8')) as unknown } : {}),
    ...(content && e.action !== 'delete' && e.nodeType === 'markdown' ? { content_md: content.toString('utf8') } : {}),
  };
}
