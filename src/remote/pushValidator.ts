import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import { retiredCommits } from '../content/purge.ts';
import { gitRefusal } from './gitAccess.ts';
import { PushedChanges, ZERO_OID } from './pushedChanges.ts';
import { MAIN_REF, pathProblems, refProblem, trailerProblems } from './pushRules.ts';
import type { PushSession } from './pushSessions.ts';

export interface RefUpdate {
  oldOid: string;
  newOid: string;
  ref: string;
}

export interface PushValidatorDeps {
  authenticator: Authenticator;
  access: ContentAccess;
  maxContentBytes: number;
}

export interface PushVerdict {
  /** Why the push is refused; empty when it is accepted. */
  problems: string[];
  /** How many new commits it brings. */
  commits: number;
}

const MAX_REPORTED = 20;

/**
 * The push rules, checked while the pushed objects are still in quarantine (nothing has moved
 * yet): the pusher may still write, only main moves and only forward, and every path the pushed
 * commits add or change is one the API would accept. Returns the problems (empty: accept).
 */
export async function validatePush(deps: PushValidatorDeps, session: PushSession, updates: RefUpdate[], quarantine: string): Promise<PushVerdict> {
  const refuse = (why: string): PushVerdict => ({ problems: [why], commits: 0 });
  const principal = await deps.authenticator.authenticate(session.token);
  if (!principal) return refuse('the credential used for this push is no longer valid.');
  const refused = await gitRefusal(deps.access, principal, session.projectId, 'content:write');
  if (refused) return refuse(refused.message);

  // A push that only deletes sends no objects, and then git makes no quarantine.
  const objects = join(session.gitdir, 'objects');
  if (quarantine !== '' && !isQuarantineOf(quarantine, objects)) return refuse('the push did not arrive in a quarantine of this repository.');
  const pushed = new PushedChanges(
    session.gitdir,
    quarantine === ''
      ? {}
      : { GIT_OBJECT_DIRECTORY: quarantine, GIT_ALTERNATE_OBJECT_DIRECTORIES: objects, GIT_QUARANTINE_PATH: quarantine },
  );

  const problems: string[] = [];
  let count = 0;
  for (const u of updates) {
    const refWhy = refProblem(u.ref, u.newOid, ZERO_OID);
    if (refWhy) {
      problems.push(refWhy);
      continue;
    }
    if (u.ref === MAIN_REF && u.oldOid !== ZERO_OID && !(await pushed.isAncestor(u.oldOid, u.newOid))) {
      problems.push(
        'non-fast-forward update of main refused: fetch, merge or rebase onto the current main, then push again, or push to refs/for/main (git push origin HEAD:refs/for/main) and the service merges it.',
      );
      continue;
    }
    const commits = await pushed.newCommits(u.newOid);
    count += commits.length;
    const retired = retiredProblem(session.gitdir, commits);
    if (retired) {
      problems.push(retired);
      continue;
    }
    problems.push(...trailerProblems(await pushed.messages(commits)));
    const changes = await pushed.changes(commits);
    const blobs = new Set<string>();
    for (const c of changes) for (const p of c.changes) if (p.status !== 'D') blobs.add(p.newOid);
    problems.push(...pathProblems(changes, await pushed.sizes([...blobs]), deps.maxContentBytes));
  }
  if (problems.length > MAX_REPORTED) {
    const more = problems.length - MAX_REPORTED;
    problems.length = MAX_REPORTED;
    problems.push(`... and ${more} more.`);
  }
  return { problems, commits: count };
}

/** Commits of a history rewritten by a purge must not come back (they hold what was purged). */
function retiredProblem(gitdir: string, commits: { oid: string }[]): string | null {
  const retired = retiredCommits(gitdir);
  if (retired.size === 0) return null;
  const back = commits.find((c) => retired.has(c.oid));
  if (!back) return null;
  return `${back.oid.slice(0, 12)} belongs to history that was rewritten (content was purged): this clone is out of date. Clone the project again and redo your changes there; do not merge the old history.`;
}

/** Git names its quarantine `<objects>/tmp_objdir-incoming-XXXXXX`; anything else is refused. */
function isQuarantineOf(quarantine: string, objects: string): boolean {
  try {
    const q = realpathSync(quarantine);
    return basename(q).startsWith('tmp_objdir-incoming-') && dirname(q) === realpathSync(objects);
  } catch {
    return false;
  }
}
