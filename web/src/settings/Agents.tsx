import { api } from '../api/client.ts';
import { ErrorAlert } from './ErrorAlert.tsx';
import { modeLabel, scopeLabel, when } from './format.ts';
import { StatusBadge } from './StatusBadge.tsx';
import type { Agent, Page } from './types.ts';
import { useLoad } from './useLoad.ts';

/** The project's agents: model, state, and what each may reach. */
export function Agents({ projectId }: { projectId: string }) {
  const agents = useLoad(() => api<Page<'agents', Agent>>('GET', `/agent-config/?project_id=${encodeURIComponent(projectId)}&limit=200`), [projectId]);
  const list = agents.data?.agents;
  return (
    <section aria-labelledby="settings-agents">
      <h4 id="settings-agents">Agents</h4>
      <ErrorAlert message={agents.error} />
      {!list ? (
        !agents.error && <p aria-busy="true">Loading…</p>
      ) : list.length === 0 ? (
        <p class="muted">No agents.</p>
      ) : (
        <ul class="connection-list" aria-label="Agents">
          {list.map((a) => (
            <li key={a.id}>
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
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
