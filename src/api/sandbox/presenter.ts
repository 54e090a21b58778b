import type { SandboxEndpoint } from '../../sandbox/endpoints/sandboxEndpoints.ts';
import type { SandboxRuntime } from '../../sandbox/runtime/runtime.ts';

/** An endpoint without its key hash; `key_prefix` tells keys apart. */
export const presentEndpoint = (e: SandboxEndpoint, runtime: SandboxRuntime) => ({
  id: e.connection.id,
  name: e.connection.name,
  project_id: e.connection.project_id,
  node_id: e.nodeId,
  path: e.connection.scope_path,
  mode: e.connection.mode,
  status: e.connection.status,
  limits: e.limits,
  runtime: runtime.name,
  runtime_description: runtime.description,
  key_prefix: e.connection.key_prefix,
  created_by: e.connection.created_by,
  created_at: e.connection.created_at,
  updated_at: e.connection.updated_at,
  last_used_at: e.connection.last_used_at,
});
