import { pathInScope } from '../policies/scope.ts';
import type { ChangeEntry, CommitChanges } from './changelog.ts';

/**
 * What a caller limited to `scope` may see of a change: changes that touch the scope (before or
 * after), with no path outside the scope (no name outside it leaks): a node that moved in has no
 * old path, one that moved out is action `moved_out` at its last path inside. Null when the
 * change is entirely outside.
 */
export function scopedEntry(scope: string, e: ChangeEntry): ChangeEntry | null {
  if (scope === '') return e;
  const inside = (p: string | null) => p !== null && (pathInScope(scope, p) || isTrashOf(scope, e, p));
  if (!inside(e.path) && !inside(e.oldPath)) return null;
  // Moved out of the scope: for this caller the node left at its last path inside it.
  if (!inside(e.path)) return { ...e, action: 'moved_out', path: e.oldPath!, oldPath: e.oldPath };
  return { ...e, oldPath: inside(e.oldPath) ? e.oldPath : null };
}

/** A commit as seen from `scope`; null when none of its changes are visible. */
export function scopedCommit(scope: string, c: CommitChanges): CommitChanges | null {
  if (scope === '') return c;
  const changes = c.changes.map((e) => scopedEntry(scope, e)).filter((e): e is ChangeEntry => e !== null);
  if (changes.length === 0) return null;
  // Generated messages name paths: keep the message only when nothing was hidden.
  const whole = changes.length === c.changes.length && changes.every((e, i) => e.path === c.changes[i]!.path && e.oldPath === c.changes[i]!.oldPath);
  return { ...c, message: whole ? c.message : '', changes };
}

/** A trash path (`.trash/<id>_<name>`) counts as inside when the node came from the scope. */
function isTrashOf(scope: string, e: ChangeEntry, p: string): boolean {
  return p.startsWith('.trash/') && e.oldPath !== null && p === e.path && pathInScope(scope, e.oldPath);
}
