import { api } from '../api/client.ts';
import { ConnectionList } from './ConnectionList.tsx';
import { modeLabel, scopeLabel, when } from './format.ts';
import { StatusBadge } from './StatusBadge.tsx';
import type { Page, SandboxEndpoint } from './types.ts';
import { useLoad } from './useLoad.ts';

/** The project's sandbox endpoints: where commands run, on which folder, and their state. */
export function Sandboxes({ projectId }: { projectId: string }) {
  const sandboxes = useLoad(
    () => api<Page<'sandbox_endpoints', SandboxEndpoint>>('GET', `/sandbox-endpoints?project_id=${encodeURIComponent(projectId)}&limit=200`),
    [projectId],
  );
  const list = sandboxes.data?.sandbox_endpoints;
  return (
    <ConnectionList id="settings-sandboxes" title="Sandbox endpoints" error={sandboxes.error} items={list} empty="No sandbox endpoints.">
      {(e) => (
        <>
          <p class="connection-title">
            <strong>{e.name}</strong> <StatusBadge status={e.status} />
          </p>
          <dl>
            <dt>Folder</dt>
            <dd>{scopeLabel(e.path)}</dd>
            <dt>Access</dt>
            <dd>{modeLabel(e.mode)}</dd>
            <dt>Runtime</dt>
            <dd>{e.runtime}</dd>
            <dt>Key</dt>
            <dd>
              <code>{e.key_prefix}…</code>
            </dd>
            <dt>Last used</dt>
            <dd>{when(e.last_used_at)}</dd>
          </dl>
        </>
      )}
    </ConnectionList>
  );
}
