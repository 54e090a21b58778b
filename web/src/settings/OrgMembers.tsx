import { api } from '../api/client.ts';
import { ConfirmButton } from '../history/ConfirmButton.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';
import { personLabel, when } from './format.ts';
import { RoleForm } from './RoleForm.tsx';
import { orgRoles, type OrganizationWithRole, type OrgMember, type OrgRole, type Page } from './types.ts';
import { useAction } from './useAction.ts';
import { useLoad } from './useLoad.ts';

/**
 * The members of the project's organization (whose roles carry over to each of its projects).
 * Its owners and admins change roles and remove members; admins cannot touch owners.
 */
export function OrgMembers({ org }: { org: OrganizationWithRole }) {
  const base = `/organizations/${encodeURIComponent(org.id)}/members`;
  const members = useLoad(() => api<Page<'members', OrgMember>>('GET', `${base}?limit=200`), [org.id]);
  const action = useAction();
  const manager = org.role === 'owner' || org.role === 'admin';
  /** The roles the caller may give: admins may not make owners. */
  const assignable = org.role === 'owner' ? orgRoles : orgRoles.filter((r) => r !== 'owner');
  const mayChange = (m: OrgMember) => manager && (org.role === 'owner' || m.role !== 'owner');

  const setRole = async (m: OrgMember, role: OrgRole) =>
    void (await action.run(() => api('PUT', `${base}/${encodeURIComponent(m.user_id)}/role`, { role }), `${personLabel(m)} is now ${role} of ${org.name}.`, members.reload));
  const remove = async (m: OrgMember) =>
    void (await action.run(() => api('DELETE', `${base}/${encodeURIComponent(m.user_id)}`), `${personLabel(m)} was removed from ${org.name}.`, members.reload));

  const list = members.data?.members;
  return (
    <section aria-labelledby="settings-org-members">
      <h3 id="settings-org-members">Organization members</h3>
      <ErrorAlert message={action.error ?? members.error} />
      {action.note && <p role="status">{action.note}</p>}
      {!list ? (
        !members.error && <p aria-busy="true">Loading…</p>
      ) : (
        <table class="settings-table">
          <caption>
            Members of {org.name}: owners and admins are admins of every project, members are editors, viewers are viewers
            {members.data!.total > list.length ? ` (the first ${list.length} of ${members.data!.total})` : ''}.
          </caption>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Organization role</th>
              <th scope="col">Joined</th>
              {manager && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {list.map((m) => (
              <tr key={m.user_id}>
                <th scope="row" data-label="Member">
                  {personLabel(m)}
                </th>
                <td data-label="Organization role">
                  {mayChange(m) ? (
                    <RoleForm label={`Organization role of ${m.email}`} current={m.role} roles={assignable} onSave={(r) => setRole(m, r)} />
                  ) : (
                    m.role
                  )}
                </td>
                <td data-label="Joined">
                  <time dateTime={m.joined_at}>{when(m.joined_at)}</time>
                </td>
                {manager && (
                  <td data-label="Actions">
                    {mayChange(m) && (
                      <ConfirmButton
                        buttonClass="danger"
                        label={`Remove ${m.email} from the organization`}
                        text="Remove"
                        question={`Remove ${m.email} from ${org.name} and all its projects?`}
                        confirm="Remove"
                        onConfirm={() => remove(m)}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
