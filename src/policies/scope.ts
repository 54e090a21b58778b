/** Scope paths are project-relative with no leading or trailing slash; '' is the whole project. */
export function normalizeScope(scope: string): string {
  return scope.split('/').filter(Boolean).join('/');
}

/** True when `path` is the scope itself or lies beneath it. */
export function pathInScope(scope: string, path: string): boolean {
  const s = normalizeScope(scope);
  if (s === '') return true;
  const p = normalizeScope(path);
  return p === s || p.startsWith(s + '/');
}

/** True when `path` is a strict ancestor of the scope (listing it would reveal names outside the scope). */
export function pathAboveScope(scope: string, path: string): boolean {
  const s = normalizeScope(scope);
  const p = normalizeScope(path);
  return s !== '' && (p === '' || s.startsWith(p + '/'));
}
