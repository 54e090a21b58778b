import { Agents } from './Agents.tsx';
import { McpEndpoints } from './McpEndpoints.tsx';
import { Sandboxes } from './Sandboxes.tsx';
import { Syncs } from './Syncs.tsx';

/**
 * What connects to the project, by kind, with its state. MCP and sandbox endpoints are listed for
 * those who manage keys (the project's admins); agents and syncs for anyone in the project.
 */
export function Connections({ projectId, canManageKeys }: { projectId: string; canManageKeys: boolean }) {
  return (
    <section aria-labelledby="settings-connections">
      <h3 id="settings-connections">Connections</h3>
      <Agents projectId={projectId} />
      {canManageKeys && <McpEndpoints projectId={projectId} />}
      {canManageKeys && <Sandboxes projectId={projectId} />}
      <Syncs projectId={projectId} />
    </section>
  );
}
