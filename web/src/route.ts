/**
 * The dashboard's address: every view has one, so it can be linked, bookmarked, reloaded and
 * walked with back/forward. The service answers index.html for all of them
 * (src/http/middleware/webAssets.ts):
 *
 *   /                                          the projects
 *   /projects/<id>                             a project
 *   /projects/<id>/files/<path>                a folder or file; ?tab=history|blame|snapshots
 *   /projects/<id>/files/<path>?version=3      a file at a version
 *   /projects/<id>/files/<path>?diff=2..5      the changes between two versions
 *   /projects/<id>/history | trash | settings  a project view (with ?path=<node> when one is open too)
 *   /projects/<id>/search?q=<words>            search results
 *   /projects/<id>/chat[/<session id>]         the chat, a conversation
 */

export type NodeTab = 'content' | 'history' | 'blame' | 'snapshots';
export type Panel = 'history' | 'trash' | 'settings' | 'chat' | 'search';

export interface DashRoute {
  projectId: string | null;
  /** The open node's path ('' is not a node: null when none is open). */
  path: string | null;
  tab: NodeTab;
  /** A file shown at this version (read-only). */
  version: number | null;
  /** Two versions compared (in the History tab). */
  diff: [number, number] | null;
  panel: Panel | null;
  /** The search's words (panel `search`). */
  q: string | null;
  /** A chat session (panel `chat`). */
  chat: string | null;
}

const PANELS: Panel[] = ['history', 'trash', 'settings', 'chat', 'search'];
const TABS: NodeTab[] = ['content', 'history', 'blame', 'snapshots'];

export const emptyRoute: DashRoute = { projectId: null, path: null, tab: 'content', version: null, diff: null, panel: null, q: null, chat: null };

const positive = (s: string | null): number | null => (s && /^[1-9]\d{0,9}$/.test(s) ? Number(s) : null);

/** The view an address names; parts it does not understand are left out (the view then shows less, never something else). */
export function parseRoute(pathname: string, search: string): DashRoute {
  const parts = pathname.split('/').filter(Boolean).map(safeDecode);
  if (parts[0] !== 'projects' || !parts[1]) return { ...emptyRoute };
  const params = new URLSearchParams(search);
  const r: DashRoute = { ...emptyRoute, projectId: parts[1] };
  const rest = parts.slice(2);
  if (rest[0] === 'files' && rest.length > 1) r.path = rest.slice(1).join('/');
  else if (PANELS.includes(rest[0] as Panel)) {
    r.panel = rest[0] as Panel;
    if (r.panel === 'chat' && rest[1]) r.chat = rest[1];
    const p = params.get('path');
    if (p) r.path = p;
  }
  const tab = params.get('tab');
  if (TABS.includes(tab as NodeTab)) r.tab = tab as NodeTab;
  r.version = positive(params.get('version'));
  const diff = /^(\d{1,10})\.\.([1-9]\d{0,9})$/.exec(params.get('diff') ?? '');
  if (diff) {
    r.diff = [Number(diff[1]), Number(diff[2])];
    r.tab = 'history';
  }
  if (r.panel === 'search') r.q = params.get('q') ?? '';
  if (r.path === null) Object.assign(r, { tab: 'content', version: null, diff: null });
  return r;
}

/** The address of a view (the inverse of parseRoute). */
export function routeUrl(r: DashRoute): string {
  if (!r.projectId) return '/';
  const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');
  let path = `/projects/${encodeURIComponent(r.projectId)}`;
  const q = new URLSearchParams();
  if (r.panel) {
    path += `/${r.panel}`;
    if (r.panel === 'chat' && r.chat) path += `/${encodeURIComponent(r.chat)}`;
    if (r.panel === 'search' && r.q) q.set('q', r.q);
    if (r.path !== null) q.set('path', r.path);
  } else if (r.path !== null) path += `/files/${enc(r.path)}`;
  if (r.path !== null) {
    if (r.diff) q.set('diff', `${r.diff[0]}..${r.diff[1]}`);
    else if (r.tab !== 'content') q.set('tab', r.tab);
    if (r.version !== null && !r.diff) q.set('version', String(r.version));
  }
  const s = q.toString();
  return s ? `${path}?${s.replace(/%2F/g, '/')}` : path;
}

export function currentRoute(): DashRoute {
  return parseRoute(location.pathname, location.search);
}

/** Shows `r` in the address bar: a new history entry, or in place (`replace`) for the same view refined. */
export function showRoute(r: DashRoute, replace = false): void {
  const url = routeUrl(r);
  if (url === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
