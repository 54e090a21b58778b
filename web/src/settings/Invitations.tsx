import { useRef, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { CopyButton } from './CopyButton.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';
import { when } from './format.ts';
import { orgRoles, type CreatedInvitation, type Invitation, type OrganizationWithRole, type OrgRole, type Page } from './types.ts';
import { useAction } from './useAction.ts';
import { useLoad } from './useLoad.ts';
import { RoleSelect } from './RoleSelect.tsx';

/**
 * Invitations to the project's organization (for its owners and admins): invite an address with
 * a role, and the pending invitations. The acceptance address is shown once, to be sent on.
 */
export function Invitations({ org }: { org: OrganizationWithRole }) {
  const base = `/organizations/${encodeURIComponent(org.id)}`;
  const pending = useLoad(() => api<Page<'invitations', Invitation>>('GET', `${base}/invitations?limit=200`), [org.id]);
  const action = useAction();
  const [sent, setSent] = useState<CreatedInvitation | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrgRole>('member');
  const assignable = org.role === 'owner' ? orgRoles : orgRoles.filter((r) => r !== 'owner');

  const invite = async (e: Event) => {
    e.preventDefault();
    setSent(null);
    const answer = await action.run(
      () => api<CreatedInvitation>('POST', `${base}/invite`, { email: email.trim(), role }),
      (inv) => `${inv.email} is invited as ${inv.role}.`,
      pending.reload,
    );
    if (!answer) return;
    setSent(answer);
    setEmail('');
  };

  const list = pending.data?.invitations;
  return (
    <section aria-labelledby="settings-invitations">
      <h3 id="settings-invitations">Invitations</h3>
      <form class="inline" aria-label={`Invite someone to ${org.name}`} onSubmit={(e) => void invite(e)}>
        <label>
          Email to invite
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Organization role
          <RoleSelect label="Organization role" value={role} roles={assignable} onChange={setRole} />
        </label>
        <button type="submit">Invite</button>
      </form>
      <ErrorAlert message={action.error ?? pending.error} />
      {action.note && <p role="status">{action.note}</p>}
      {sent && <InvitationLink invitation={sent} onDone={() => setSent(null)} />}
      {!list ? (
        !pending.error && <p aria-busy="true">Loading…</p>
      ) : list.length === 0 ? (
        <p class="muted">No pending invitations.</p>
      ) : (
        <table class="settings-table">
          <caption>Pending invitations to {org.name} (a new invitation to the same address replaces the old one).</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Invited</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {list.map((inv) => (
              <tr key={inv.id}>
                <th scope="row" data-label="Email">
                  {inv.email}
                </th>
                <td data-label="Role">{inv.role}</td>
                <td data-label="Invited">
                  <time dateTime={inv.created_at}>{when(inv.created_at)}</time>
                </td>
                <td data-label="Expires">
                  <time dateTime={inv.expires_at}>{when(inv.expires_at)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The acceptance address of a new invitation: the service sends no mail, so the inviter passes it on. */
function InvitationLink({ invitation, onDone }: { invitation: CreatedInvitation; onDone: () => void }) {
  const code = useRef<HTMLElement>(null);
  return (
    <div class="once" role="group" aria-label={`Invitation for ${invitation.email}`}>
      <p>
        Send this address to {invitation.email}: signed in with that email, they join by sending a <code>POST</code> to
        it. <strong>It will not be shown again.</strong>
      </p>
      <code class="secret" ref={code}>
        {invitation.accept_url}
      </code>
      <div class="actions">
        <CopyButton text={invitation.accept_url} target={code} label={`Copy the invitation address for ${invitation.email}`} />
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
