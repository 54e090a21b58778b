import { useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { ConfirmButton } from '../history/ConfirmButton.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';
import { personLabel } from './format.ts';
import { RoleForm } from './RoleForm.tsx';
import { projectRoles, type Page, type ProjectMember, type ProjectRole } from './types.ts';
import { useAction } from './useAction.ts';
import { useLoad } from './useLoad.ts';
import { RoleSelect } from './RoleSelect.tsx';

interface Props {
  projectId: string;
  /** members:manage on the project (its admins): change roles, add and remove members. */
  canManage: boolean;
}

/** Everyone with a role on the project: the effective role, and whether it comes from the organization. */
export function ProjectMembers({ projectId, canManage }: Props) {
  const base = `/projects/${encodeURIComponent(projectId)}/members`;
  const members = useLoad(() => api<Page<'members', ProjectMember>>('GET', `${base}?limit=200`), [projectId]);
  const action = useAction();
  const change = async (what: () => Promise<unknown>, done: string): Promise<boolean> => (await action.run(what, done, members.reload)) !== null;
  const setRole = async (m: ProjectMember, role: ProjectRole) =>
    void (await change(() => api('PUT', `${base}/${encodeURIComponent(m.user_id)}/role`, { role }), `${personLabel(m)} now has the project role ${role}.`));
  const remove = async (m: ProjectMember) =>
    void (await change(() => api('DELETE', `${base}/${encodeURIComponent(m.user_id)}`), m.org_role ? `${personLabel(m)}'s project role was removed.` : `${personLabel(m)} was removed from the project.`));

  const list = members.data?.members;
  return (
    <section aria-labelledby="settings-project-members">
      <h3 id="settings-project-members">Project members</h3>
      <ErrorAlert message={action.error ?? members.error} />
      {action.note && <p role="status">{action.note}</p>}
      {canManage && <AddMember onAdd={(email, role) => change(() => api('POST', base, { email, role }), `${email} was added as ${role}.`)} />}
      {!list ? (
        !members.error && <p aria-busy="true">Loading…</p>
      ) : (
        <table class="settings-table">
          <caption>
            Who may open this project. The role that counts is the stronger of the organization's and the project's
            {members.data!.total > list.length ? ` (the first ${list.length} of ${members.data!.total})` : ''}.
          </caption>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Organization role</th>
              <th scope="col">Project role</th>
              {canManage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {list.map((m) => (
              <tr key={m.user_id}>
                <th scope="row" data-label="Member">
                  {personLabel(m)}
                </th>
                <td data-label="Role">{m.role}</td>
                <td data-label="Organization role">{m.org_role ?? '—'}</td>
                <td data-label="Project role">
                  {canManage ? (
                    <RoleForm label={`Project role of ${m.email}`} current={m.project_role} roles={projectRoles} onSave={(r) => setRole(m, r)} />
                  ) : (
                    m.project_role ?? '—'
                  )}
                </td>
                {canManage && (
                  <td data-label="Actions">
                    {m.project_role ? (
                      <ConfirmButton
                        buttonClass="danger"
                        label={m.org_role ? `Remove the project role of ${m.email}` : `Remove ${m.email} from the project`}
                        text="Remove"
                        question={m.org_role ? `Remove the project role? ${m.email} keeps the organization's.` : `Remove ${m.email} from the project?`}
                        confirm="Remove"
                        onConfirm={() => remove(m)}
                      />
                    ) : (
                      <span class="muted">from the organization</span>
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

/** Gives an existing account a role on the project (`POST /projects/{id}/members`). */
function AddMember({ onAdd }: { onAdd: (email: string, role: ProjectRole) => Promise<boolean> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<ProjectRole>('editor');
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await onAdd(email.trim(), role)) setEmail('');
  };
  return (
    <form class="inline" aria-label="Add a project member" onSubmit={(e) => void submit(e)}>
      <label>
        Email of an existing account
        <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <label>
        Project role
        <RoleSelect label="Project role" value={role} roles={projectRoles} onChange={setRole} />
      </label>
      <button type="submit">Add member</button>
    </form>
  );
}
