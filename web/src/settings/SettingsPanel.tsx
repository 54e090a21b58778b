import { api, ApiError } from '../api/client.ts';
import { AccessKeys } from './AccessKeys.tsx';
import { Connections } from './Connections.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';
import { Invitations } from './Invitations.tsx';
import { OrgMembers } from './OrgMembers.tsx';
import { ProjectMembers } from './ProjectMembers.tsx';
import type { OrganizationWithRole, ProjectWithRole } from './types.ts';
import { useLoad } from './useLoad.ts';
import { Webhooks } from './Webhooks.tsx';

/**
 * A project's settings: members and roles (the project's and its organization's), invitations,
 * access keys, webhooks, and the connections with their state. Each part shows what the caller's roles
 * let them see, and offers only the changes those roles allow (README: Permissions).
 */
export function SettingsPanel({ projectId }: { projectId: string }) {
  const project = useLoad(() => api<ProjectWithRole>('GET', `/projects/${encodeURIComponent(projectId)}`), [projectId]);
  const orgId = project.data?.org_id;
  // A member of the project alone is not one of its organization (404): the organization parts are left out.
  const org = useLoad(
    () => (orgId ? api<OrganizationWithRole>('GET', `/organizations/${encodeURIComponent(orgId)}`).catch(notFoundAsNull) : Promise.resolve(null)),
    [orgId],
  );
  const admin = project.data?.role === 'admin';
  const orgManager = org.data?.role === 'owner' || org.data?.role === 'admin';

  return (
    <section class="settings" aria-labelledby="settings-title">
      <h2 id="settings-title">Project settings</h2>
      <ErrorAlert message={project.error ?? org.error} />
      {project.data && (
        <>
          <p class="muted">
            Your role here: {project.data.role ?? 'none'}
            {org.data?.role ? `; in the organization ${org.data.name}: ${org.data.role}` : ''}.
          </p>
          <ProjectMembers projectId={projectId} canManage={admin} />
          {org.data && <OrgMembers org={org.data} />}
          {org.data && orgManager && <Invitations org={org.data} />}
          {admin ? (
            <>
              <AccessKeys projectId={projectId} />
              <Webhooks projectId={projectId} />
            </>
          ) : (
            <p class="muted">Access keys, MCP and sandbox endpoints are managed by the project's admins.</p>
          )}
          <Connections projectId={projectId} canManageKeys={admin} />
        </>
      )}
    </section>
  );
}

function notFoundAsNull(err: unknown): null {
  if (err instanceof ApiError && err.status === 404) return null;
  throw err;
}
