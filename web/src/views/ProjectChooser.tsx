import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import { sessionUser } from '../api/session.ts';
import type { Organization, Project } from '../api/types.ts';
import { signOut } from './signOut.ts';

interface Props {
  onOpen: (p: Project) => void;
}

/** The user's organizations and their projects; a fresh account is set up first (POST /auth/initialize). */
export function ProjectChooser({ onOpen }: Props) {
  const [orgs, setOrgs] = useState<Organization[] | null>(null);
  const [orgId, setOrgId] = useState<string>('');
  const [projects, setProjects] = useState<Project[]>([]);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    void (async () => {
      try {
        let list = (await api<{ organizations: Organization[] }>('GET', '/organizations?limit=200')).organizations;
        if (list.length === 0 && !sessionUser()?.initialized) {
          await api('POST', '/auth/initialize');
          list = (await api<{ organizations: Organization[] }>('GET', '/organizations?limit=200')).organizations;
        }
        setOrgs(list);
        setOrgId(list[0]?.id ?? '');
      } catch (err) {
        setError(err instanceof ApiError ? err.message : String(err));
      }
    })();
  }, []);

  useEffect(() => {
    if (!orgId) return;
    api<{ projects: Project[] }>('GET', `/projects?org_id=${encodeURIComponent(orgId)}&limit=200`)
      .then((r) => setProjects(r.projects))
      .catch((err) => setError(err instanceof ApiError ? err.message : String(err)));
  }, [orgId]);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      onOpen(await api<Project>('POST', '/projects', { org_id: orgId, name: name.trim() }));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };

  return (
    <main class="chooser">
      <header class="bar">
        <h1>Projects</h1>
        <span class="who">{sessionUser()?.email}</span>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      {error && <p role="alert" class="error">{error}</p>}
      {orgs === null ? (
        <p aria-busy="true">Loading…</p>
      ) : orgs.length === 0 ? (
        <p>You are not a member of any organization yet.</p>
      ) : (
        <>
          <label>
            Organization
            <select value={orgId} onChange={(e) => setOrgId(e.currentTarget.value)}>
              {orgs.map((o) => (
                <option key={o.id} value={o.id}>{o.name}</option>
              ))}
            </select>
          </label>
          <ul class="projects" aria-label="Projects of this organization">
            {projects.map((p) => (
              <li key={p.id}>
                <button type="button" class="link" onClick={() => onOpen(p)}>{p.name}</button>
                {p.description && <span class="muted"> — {p.description}</span>}
              </li>
            ))}
            {projects.length === 0 && <li class="muted">No projects yet.</li>}
          </ul>
          <form onSubmit={create} class="inline" aria-label="Create a project">
            <label>
              New project name
              <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={!orgId || !name.trim()}>Create project</button>
          </form>
        </>
      )}
    </main>
  );
}
