import { api } from '../api/client.ts';
import { ConnectionList } from './ConnectionList.tsx';
import { modeLabel, scopeLabel, when } from './format.ts';
import { StatusBadge } from './StatusBadge.tsx';
import type { Agent, Page } from './types.ts';
import { useLoad } from './useLoad.ts';

/** The project's agents: model, state, and what each may reach. */
export function Agents({ projectId }: { projectId: string }) {
  const agents = useLoad(() => api<Page<'agents', Agent>>('GET', `/agent-config/?project_id=${encodeURIComponent(projectId)}&limit=200`), [projectId]);
  const list = agents.data?.agents;
  return (
    <ConnectionList id="settings-agents" title="Agents" error={agents.error} items={list} empty="No agents.">
      {(a) => (
        <>
          <p class="connection-title">
            <strong>{a.name}</strong> {a.is_default && <span class="muted">(default)</span>} <StatusBadge status={a.status} />
          </p>
          {a.description && <p>{a.description}</p>}
          <dl>
            <dt>Model</dt>
            <dd>{a.model}</dd>
            <dt>Reaches</dt>
            <dd>{a.accesses.length === 0 ? 'nothing yet' : a.accesses.map((x) => `${scopeLabel(x.path)} (${modeLabel(x.mode)})`).join(', ')}</dd>
            {a.bash_tools.length > 0 && (
              <>
                <dt>Shells</dt>
                <dd>{a.bash_tools.map((b) => `${b.name} on ${scopeLabel(b.path)}`).join(', ')}</dd>
              </>
            )}
            <dt>Key</dt>
            <dd>
              <code>{a.key_prefix}…</code>
            </dd>
            <dt>Last used</dt>
            <dd>{when(a.last_used_at)}</dd>
          </dl>
        </>
      )}
    </ConnectionList>
  );
}
