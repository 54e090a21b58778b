import { useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { ConfirmButton } from '../history/ConfirmButton.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';
import { modeLabel, scopeLabel, when } from './format.ts';
import { NewKey } from './NewKey.tsx';
import { NewKeyForm, type NewKeyRequest } from './NewKeyForm.tsx';
import { StatusBadge } from './StatusBadge.tsx';
import type { Connection, Page } from './types.ts';
import { useAction } from './useAction.ts';
import { useLoad } from './useLoad.ts';

/**
 * The project's access keys (connections of kind `api`): create one (its secret shown once),
 * revoke one (it stays listed, dead for good) or delete it. The list never holds a secret,
 * only the prefix that tells keys apart.
 */
export function AccessKeys({ projectId }: { projectId: string }) {
  const keys = useLoad(
    () => api<Page<'connections', Connection>>('GET', `/connections/?project_id=${encodeURIComponent(projectId)}&kind=api&limit=200`),
    [projectId],
  );
  const action = useAction();
  const [fresh, setFresh] = useState<{ name: string; secret: string } | null>(null);

  const create = async (request: NewKeyRequest): Promise<boolean> => {
    setFresh(null);
    const answer = await action.run(
      () => api<{ connection: Connection; key: string }>('POST', '/connections/', { project_id: projectId, kind: 'api', ...request }),
      (a) => `Key “${a.connection.name}” created.`,
      keys.reload,
    );
    if (answer) setFresh({ name: answer.connection.name, secret: answer.key });
    return answer !== null;
  };
  const revoke = async (k: Connection) =>
    void (await action.run(() => api('PATCH', `/connections/${encodeURIComponent(k.id)}`, { status: 'revoked' }), `Key “${k.name}” revoked: it no longer works.`, keys.reload));
  const remove = async (k: Connection) =>
    void (await action.run(() => api('DELETE', `/connections/${encodeURIComponent(k.id)}`), `Key “${k.name}” deleted.`, keys.reload));

  const list = keys.data?.connections;
  return (
    <section aria-labelledby="settings-keys">
      <h3 id="settings-keys">Access keys</h3>
      <p class="muted">For scripts and integrations: a key reaches only this project, only inside its folder; a read-only key cannot write.</p>
      <NewKeyForm onCreate={create} />
      <ErrorAlert message={action.error ?? keys.error} />
      {action.note && <p role="status">{action.note}</p>}
      {fresh && <NewKey name={fresh.name} secret={fresh.secret} onDone={() => setFresh(null)} />}
      {!list ? (
        !keys.error && <p aria-busy="true">Loading…</p>
      ) : list.length === 0 ? (
        <p class="muted">No access keys yet.</p>
      ) : (
        <table class="settings-table">
          <caption>
            Access keys of this project: the key itself is shown only when it is created
            {keys.data!.total > list.length ? ` (the first ${list.length} of ${keys.data!.total})` : ''}.
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Reaches</th>
              <th scope="col">Access</th>
              <th scope="col">Status</th>
              <th scope="col">Key</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((k) => (
              <tr key={k.id}>
                <th scope="row" data-label="Name">
                  {k.name}
                </th>
                <td data-label="Reaches">{scopeLabel(k.scope_path)}</td>
                <td data-label="Access">{modeLabel(k.mode)}</td>
                <td data-label="Status">
                  <StatusBadge status={k.status} />
                </td>
                <td data-label="Key">
                  <code>{k.key_prefix}…</code>
                </td>
                <td data-label="Last used">{when(k.last_used_at)}</td>
                <td data-label="Actions">
                  <div class="row-actions">
                    {k.status !== 'revoked' && (
                      <ConfirmButton
                        buttonClass="danger"
                        label={`Revoke the key ${k.name}`}
                        text="Revoke"
                        question={`Revoke “${k.name}”? Whatever uses it is refused from now on; this cannot be undone.`}
                        confirm="Revoke"
                        onConfirm={() => revoke(k)}
                      />
                    )}
                    <ConfirmButton
                      buttonClass="danger"
                      label={`Delete the key ${k.name}`}
                      text="Delete"
                      question={`Delete “${k.name}”? It stops working and leaves this list.`}
                      confirm="Delete"
                      onConfirm={() => remove(k)}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
