import { useEffect, useState } from 'preact/hooks';
import { api } from './api/client.ts';
import type { Project } from './api/types.ts';
import { onSessionChange, restoreSession, type SessionUser } from './api/session.ts';
import { currentRoute, emptyRoute, showRoute, type DashRoute } from './route.ts';
import { NotFound } from './views/NotFound.tsx';
import { SignIn } from './views/SignIn.tsx';
import { ProjectChooser } from './views/ProjectChooser.tsx';
import { Workspace } from './views/Workspace.tsx';

/** Signed out → sign in; signed in → choose a project; a project → its workspace. The address names the view (route.ts). */
export function App() {
  // undefined while asking the server who is signed in: a reload keeps the session (its cookies).
  const [user, setUser] = useState<SessionUser | null | undefined>(undefined);
  const [route, setRoute] = useState<DashRoute>(currentRoute);
  const [project, setProject] = useState<Project | null>(null);
  /** The project the address names could not be opened: not found, or not the viewer's to see. */
  const [missing, setMissing] = useState<string | null>(null);

  useEffect(() => {
    const off = onSessionChange(setUser);
    void restoreSession();
    return off;
  }, []);
  useEffect(() => {
    const moved = () => setRoute(currentRoute());
    addEventListener('popstate', moved);
    return () => removeEventListener('popstate', moved);
  }, []);

  // The project the address names, once signed in; another user signing in starts at their own chooser.
  useEffect(() => {
    if (!user) {
      setProject(null);
      return;
    }
    const id = route.projectId;
    if (!id) {
      setProject(null);
      setMissing(null);
      return;
    }
    if (project?.id === id) return;
    let gone = false;
    api<Project>('GET', `/projects/${encodeURIComponent(id)}`).then(
      (p) => {
        if (gone) return;
        setMissing(null);
        setProject(p);
      },
      () => {
        if (gone) return;
        setProject(null);
        setMissing(id);
      },
    );
    return () => {
      gone = true;
    };
  }, [user, route.projectId]);

  const go = (r: DashRoute, replace = false) => {
    showRoute(r, replace);
    setRoute(r);
  };
  const open = (p: Project | null) => {
    if (p) setProject(p);
    go(p ? { ...emptyRoute, projectId: p.id } : { ...emptyRoute });
  };

  if (user === undefined) return null;
  if (!user) return <SignIn />;
  if (!route.projectId) return <ProjectChooser onOpen={open} />;
  if (missing === route.projectId) return <NotFound what="This project" onBack={() => open(null)} />;
  if (!project || project.id !== route.projectId) return <p aria-busy="true">Loading…</p>;
  return <Workspace key={project.id} project={project} route={route} onRoute={go} onLeave={() => open(null)} />;
}
