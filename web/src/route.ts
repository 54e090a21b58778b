/**
 * The dashboard's one client route: `/projects/<id>` opens a project, `/` the chooser. The
 * service answers index.html for both (src/http/middleware/webAssets.ts).
 */
export function projectInUrl(): string | null {
  const m = /^\/projects\/([^/]+)/.exec(location.pathname);
  return m ? decodeURIComponent(m[1]!) : null;
}

export function showProjectInUrl(projectId: string | null): void {
  const path = projectId ? `/projects/${encodeURIComponent(projectId)}` : '/';
  if (location.pathname !== path) history.pushState(null, '', path);
}
