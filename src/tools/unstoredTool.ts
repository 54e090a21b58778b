import type { ToolRecord } from './toolStore.ts';

/**
 * A tool record that is never stored: a surface offering one of the library's tool types bound
 * to its own node (an MCP endpoint's folder, an agent's access or bash tool). `Tools.call` reads
 * only these fields, so the surface gets the library's argument checks and subtree rule as is.
 */
export function unstoredTool(t: { id: string; projectId: string; nodeId: string | null; type: string; config?: Record<string, unknown>; at: string }): ToolRecord {
  return {
    id: t.id,
    project_id: t.projectId,
    node_id: t.nodeId,
    name: t.type,
    description: '',
    type: t.type,
    config: t.config ?? {},
    created_by: null,
    created_at: t.at,
    updated_at: t.at,
  };
}
