import { useEffect, useState } from 'preact/hooks';
import type { Project } from './api/types.ts';
import { onSessionChange, restoreSession, type SessionUser } from './api/session.ts';
import { projectInUrl, showProjectInUrl } from './route.ts';
import { SignIn } from './views/SignIn.tsx';
import { ProjectChooser } from './views/ProjectChooser.tsx';
import { Workspace } from './views/Workspace.tsx';

/** Signed out → sign in; signed in → choose a project; a project → its workspace. */
export function App() {
  // undefined while asking the server who is signed in: a reload keeps the session (its cookies).
  const [user, setUser] = useState<SessionUser | null | undefined>(undefined);
  const [project, setProject] = useState<Project | null>(null);
  // Signing out leaves the project too: the next user starts at their own chooser.
  useEffect(() => {
    const off = onSessionChange((u) => {
      setUser(u);
      if (!u) setProject(null);
    });
    void restoreSession();
    return off;
  }, []);
  useEffect(() => {
    const back = () => {
      if (!projectInUrl()) setProject(null);
    };
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);

  const open = (p: Project | null) => {
    setProject(p);
    showProjectInUrl(p?.id ?? null);
  };

  if (user === undefined) return null;
  if (!user) return <SignIn />;
  if (!project) return <ProjectChooser wanted={projectInUrl()} onOpen={open} />;
  return <Workspace key={project.id} project={project} onLeave={() => open(null)} />;
}
