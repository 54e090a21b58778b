import { PLACEHOLDER, TRASH_DIR, baseName, isTrashPath, normalizePath } from '../content/paths.ts';
import { TRAILER_KEY_LINE } from '../content/trailers.ts';
import { EMPTY_BLOB } from '../content/tree.ts';
import type { CommitChanges, PathChange } from './pushedChanges.ts';

export const MAIN_REF = 'refs/heads/main';
/** Pushed there, a commit is merged into main by the service (git/pushMerge.ts). */
export const FOR_MAIN_REF = 'refs/for/main';
const FILE_MODES = new Set(['100644', '100755']);

/** Why a ref update is refused before its objects are even looked at, or null. */
export function refProblem(ref: string, newOid: string, zero: string): string | null {
  if (ref === FOR_MAIN_REF) return newOid === zero ? `${FOR_MAIN_REF} cannot be deleted.` : null;
  if (ref !== MAIN_REF) return `only ${MAIN_REF} (or ${FOR_MAIN_REF}, merged by the service) can be pushed; ${ref} was refused (the content lives on main).`;
  if (newOid === zero) return 'deleting main is not allowed.';
  return null;
}

/**
 * The API's rules applied to every path a pushed commit adds or changes: a valid path (no
 * `.git`, control characters, `.`/`..` or over-long names), plain files only, content within
 * the size limit, `.cnskeep` empty, and `.trash` changed only by moves (content that leaves
 * another path in the same commit unchanged) or permanent deletions.
 */
export function pathProblems(commits: CommitChanges[], sizes: Map<string, number>, maxBytes: number): string[] {
  const problems: string[] = [];
  for (const { commit, changes } of commits) {
    const at = (p: PathChange, why: string) => problems.push(`${commit.slice(0, 12)}: ${p.path}: ${why}`);
    const removed = new Map<string, number>();
    for (const c of changes) if (c.status === 'D') removed.set(c.oldOid, (removed.get(c.oldOid) ?? 0) + 1);
    for (const c of changes) {
      if (c.status === 'D') continue;
      const why = entryProblem(c, sizes, maxBytes);
      if (why) {
        at(c, why);
        continue;
      }
      if (c.path === TRASH_DIR) at(c, `${TRASH_DIR} is the trash folder, not a file.`);
      else if (isTrashPath(c.path)) {
        const left = removed.get(c.newOid) ?? 0;
        if (c.status !== 'A' || left === 0) at(c, `${TRASH_DIR} changes only by moving nodes into or out of it (unchanged content).`);
        else removed.set(c.newOid, left - 1);
      }
    }
  }
  return problems;
}

/**
 * Pushed commits may not carry the store's own trailers: they would be read back as versions
 * made by whatever actor and node ids they name (a forged actor or an overwritten node).
 */
export function trailerProblems(messages: Map<string, string>): string[] {
  const problems: string[] = [];
  for (const [commit, message] of messages) {
    const m = TRAILER_KEY_LINE.exec(message);
    if (!m) continue;
    problems.push(
      `${commit.slice(0, 12)}: the commit message has a "${m[1]!.trim()}:" line; Cns-Actor, Cns-Node and Cns-From lines are written by the service only. Reword the commit (git commit --amend, git rebase -i) and push again.`,
    );
  }
  return problems;
}

function entryProblem(c: PathChange, sizes: Map<string, number>, maxBytes: number): string | null {
  if (c.notUtf8) return 'names must be valid UTF-8.';
  try {
    normalizePath(c.path);
  } catch (e) {
    return (e as Error).message.replace(/^path /, 'the path ') + '.';
  }
  if (c.newMode === '120000') return 'symbolic links are not supported.';
  if (c.newMode === '160000') return 'submodules are not supported.';
  if (!FILE_MODES.has(c.newMode)) return `file mode ${c.newMode} is not supported.`;
  if (baseName(c.path) === PLACEHOLDER && c.newOid !== EMPTY_BLOB) {
    return `${PLACEHOLDER} is reserved for empty folders and must be empty.`;
  }
  const size = sizes.get(c.newOid);
  if (size !== undefined && size > maxBytes) return `${size} bytes is larger than the limit of ${maxBytes} bytes per file.`;
  return null;
}
