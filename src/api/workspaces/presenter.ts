import type { WorkspaceStatus } from '../../agents/workspaces/agentWorkspaces.ts';
import type { WorkspaceRecord } from '../../agents/workspaces/workspaceStore.ts';

export const presentWorkspace = (w: WorkspaceRecord) => ({
  agent_id: w.agentId,
  project_id: w.projectId,
  base_version: w.baseVersion,
  roots: w.roots,
  created_by: w.createdBy,
  created_at: w.createdAt,
  updated_at: w.updatedAt,
});

export const presentStatus = (s: WorkspaceStatus) => ({ ...presentWorkspace(s.workspace), changes: s.changes });
