/**
 * What the address of a request says about where it runs, without a body and without the
 * database (the primary uses it on the first request head of each connection, a worker on every
 * request): the project the address names, if any, and whether the request may change it.
 * Changes run on the project's owner; everything else may run on any worker. Addresses that
 * name a project only through a record id (a node, a tool, an agent…) or in their body are
 * placed later, by the route's declared check (cluster/ownerGate.ts).
 */
export interface RouteTarget {
  project: string | null;
  change: boolean;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ID = '[A-Za-z0-9_-]{1,128}';
const inPath = [new RegExp(`^/api/v1/content/(${ID})(?:/|$)`), new RegExp(`^/api/v1/projects/(${ID})(?:/|$)`), new RegExp(`^/git/(${ID})\\.git(?:/|$)`)];
const UPLOAD = /^\/api\/v1\/nodes\/upload\/([^/?]+)$/;

export function routeTarget(method: string, path: string, query: string): RouteTarget {
  // A push's hooks call the worker running the push directly (remote/hookUrl.ts).
  if (path.startsWith('/git/_hooks/')) return { project: null, change: false };
  const project = projectOf(method, path, query);
  return { project, change: isChange(method, path, query) };
}

function projectOf(method: string, path: string, query: string): string | null {
  for (const re of inPath) {
    const m = re.exec(path);
    if (m) return m[1]!;
  }
  if (method === 'PUT') {
    const m = UPLOAD.exec(path);
    if (m) return uploadProject(m[1]!);
  }
  if (query.includes('project_id=')) {
    const id = new URLSearchParams(query).get('project_id');
    if (id && new RegExp(`^${ID}$`).test(id)) return id;
  }
  return null;
}

function isChange(method: string, path: string, query: string): boolean {
  if (path.startsWith('/git/')) {
    // A fetch's negotiation is a POST that changes nothing; a push starts with its ref advertisement.
    if (path.endsWith('/git-upload-pack')) return false;
    if (path.endsWith('/git-receive-pack')) return true;
    if (path.endsWith('/info/refs')) return query.includes('service=git-receive-pack');
  }
  return !READ_METHODS.has(method);
}

/**
 * The project an upload address names: the `pid` claim of its token, read without checking the
 * signature. For routing only: the route verifies the token before anything is written.
 */
function uploadProject(token: string): string | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { pid?: unknown };
    return typeof claims.pid === 'string' && new RegExp(`^${ID}$`).test(claims.pid) ? claims.pid : null;
  } catch {
    return null;
  }
}
