import { useEffect, useState } from 'preact/hooks';
import type { Project } from './api/types.ts';
import { onSessionChange, sessionUser } from './api/session.ts';
import { projectInUrl, showProjectInUrl } from './route.ts';
import { SignIn } from './views/SignIn.tsx';
import { ProjectChooser } from './views/ProjectChooser.tsx';
import { Workspace } from './views/Workspace.tsx';

/** Signed out → sign in; signed in → choose a project; a project → its workspace. */
export function App() {
  const [user, setUser] = useState(sessionUser());
  const [project, setProject] = useState<Project | null>(null);
  // Signing out leaves the project too: the next user starts at their own chooser.
  useEffect(
    () =>
      onSessionChange((t) => {
        setUser(t?.user ?? null);
        if (!t) setProject(null);
      }),
    [],
  );
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

  if (!user) return <SignIn />;
  if (!project) return <ProjectChooser wanted={projectInUrl()} onOpen={open} />;
  return <Workspace key={project.id} project={project} onLeave={() => open(null)} />;
}
