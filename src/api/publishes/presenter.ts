import type { PublishView } from '../../publish/publishes.ts';

/** A publish as the API shows it; `url` is its public address on this server. */
export function presentPublish({ record, node }: PublishView, baseUrl: string, now = Date.now()) {
  const status = !node
    ? ('node_deleted' as const)
    : node.state !== 'active'
      ? ('node_trashed' as const)
      : !record.enabled
        ? ('disabled' as const)
        : record.expires_at !== null && Date.parse(record.expires_at) <= now
          ? ('expired' as const)
          : ('live' as const);
  return {
    id: record.id,
    project_id: record.project_id,
    node_id: record.node_id,
    publish_key: record.publish_key,
    url: `${baseUrl}/api/v1/p/${record.publish_key}`,
    slug: record.slug,
    version: record.version,
    enabled: record.enabled,
    expires_at: record.expires_at,
    status,
    node_type: node?.type ?? null,
    node_path: node ? (node.state === 'active' ? node.path : (node.originalPath ?? node.path)) : null,
    created_by: record.created_by,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}
