import type { NodeInfo } from '../../content/contentStore.ts';

/** A node as tools answer it (snake_case like the REST API). */
export const presentEntry = (n: NodeInfo) => ({
  id: n.id,
  name: n.name,
  path: n.path,
  type: n.type,
  size: n.size,
  version: n.version,
  updated_at: n.updatedAt,
});
