import { useRef, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { ConfirmButton } from '../history/ConfirmButton.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';
import { scopeLabel, when } from './format.ts';
import { CopyButton } from './CopyButton.tsx';
import { StatusBadge } from './StatusBadge.tsx';
import { useAction } from './useAction.ts';
import { useLoad } from './useLoad.ts';

interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  created_at: string;
}

interface Hook {
  id: string;
  url: string;
  events: string[];
  path_prefix: string;
  state: 'active' | 'inactive' | 'disabled';
  disabled_reason: string | null;
  pending_deliveries: number;
  recent_deliveries?: Delivery[];
  secret?: string | null;
}

const CONTENT_EVENTS = ['content.created', 'content.updated', 'content.deleted', 'content.moved', 'content.restored', 'version.rolled_back'];

/**
 * The project's outgoing webhooks (project admins): create one (its secret shown once), see
 * each with its latest deliveries, send a ping, delete one. The API answers every detail.
 */
export function Webhooks({ projectId }: { projectId: string }) {
  const base = `/projects/${encodeURIComponent(projectId)}/webhooks`;
  const hooks = useLoad(() => api<{ webhooks: Hook[]; total: number }>('GET', `${base}?recent=5`), [projectId]);
  const action = useAction();
  const [url, setUrl] = useState('');
  const [folder, setFolder] = useState('');
  const [fresh, setFresh] = useState<{ name: string; secret: string } | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    setFresh(null);
    const answer = await action.run(
      () => api<Hook>('POST', base, { url: url.trim(), events: CONTENT_EVENTS, path_prefix: folder.trim().replace(/^\/+|\/+$/g, '') }),
      (h) => `Webhook to ${h.url} created.`,
      hooks.reload,
    );
    if (answer) {
      setFresh({ name: answer.url, secret: answer.secret ?? '' });
      setUrl('');
      setFolder('');
    }
  };
  const ping = async (h: Hook) =>
    void (await action.run(
      () => api<Delivery>('POST', `${base}/${encodeURIComponent(h.id)}/ping`),
      (d) => (d.status === 'delivered' ? `Ping to ${h.url} delivered (${d.response_status}).` : `Ping to ${h.url} failed: ${d.error ?? d.response_status}.`),
      hooks.reload,
    ));
  const remove = async (h: Hook) => void (await action.run(() => api('DELETE', `${base}/${encodeURIComponent(h.id)}`), `Webhook to ${h.url} deleted.`, hooks.reload));

  const list = hooks.data?.webhooks;
  return (
    <section aria-labelledby="settings-webhooks">
      <h3 id="settings-webhooks">Webhooks</h3>
      <p class="muted">Changes of this project are POSTed to these addresses, signed with each hook's secret (X-Cns-Signature-256).</p>
      <form class="inline" aria-label="Create a webhook" onSubmit={(e) => void create(e)}>
        <label>
          Webhook URL
          <input required type="url" maxLength={2048} value={url} placeholder="https://example.com/hook" onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Only beneath folder
          <input value={folder} placeholder="whole project" onInput={(e) => setFolder(e.currentTarget.value)} />
        </label>
        <button type="submit">Create webhook</button>
      </form>
      <ErrorAlert message={action.error ?? hooks.error} />
      {action.note && <p role="status">{action.note}</p>}
      {fresh && <NewSecret url={fresh.name} secret={fresh.secret} onDone={() => setFresh(null)} />}
      {!list ? (
        !hooks.error && <p aria-busy="true">Loading…</p>
      ) : list.length === 0 ? (
        <p class="muted">No webhooks yet.</p>
      ) : (
        <table class="settings-table">
          <caption>Webhooks of this project with their latest deliveries.</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Folder</th>
              <th scope="col">State</th>
              <th scope="col">Recent deliveries</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((h) => (
              <tr key={h.id}>
                <th scope="row" data-label="URL">
                  <code>{h.url}</code>
                </th>
                <td data-label="Folder">{scopeLabel(h.path_prefix)}</td>
                <td data-label="State">
                  <StatusBadge status={h.state} detail={h.disabled_reason} />
                  {h.pending_deliveries > 0 ? ` ${h.pending_deliveries} pending` : ''}
                </td>
                <td data-label="Recent deliveries">
                  {(h.recent_deliveries ?? []).length === 0 ? (
                    <span class="muted">none yet</span>
                  ) : (
                    <ul aria-label={`Recent deliveries to ${h.url}`}>
                      {h.recent_deliveries!.map((d) => (
                        <li key={d.id}>
                          {d.event}: {d.status}
                          {d.response_status !== null ? ` (${d.response_status})` : ''}, {d.attempts} attempt{d.attempts === 1 ? '' : 's'}, {when(d.created_at)}
                          {d.error ? ` — ${d.error}` : ''}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
                <td data-label="Actions">
                  <div class="row-actions">
                    <button type="button" aria-label={`Ping ${h.url}`} onClick={() => void ping(h)}>
                      Ping
                    </button>
                    <ConfirmButton
                      buttonClass="danger"
                      label={`Delete the webhook to ${h.url}`}
                      text="Delete"
                      question={`Delete the webhook to ${h.url}? Its pending deliveries are not sent.`}
                      confirm="Delete"
                      onConfirm={() => remove(h)}
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

/** A hook's secret, the only time the service answers it. */
function NewSecret({ url, secret, onDone }: { url: string; secret: string; onDone: () => void }) {
  const code = useRef<HTMLElement>(null);
  return (
    <div class="once" role="group" aria-labelledby="settings-new-webhook">
      <h4 id="settings-new-webhook">Secret of the webhook to {url}</h4>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> The receiver checks <code>X-Cns-Signature-256</code> (HMAC-SHA256 of the body) with it.
      </p>
      <code class="secret" ref={code}>
        {secret}
      </code>
      <div class="actions">
        <CopyButton text={secret} target={code} label="Copy the webhook secret" />
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
