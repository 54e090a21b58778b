import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CommitApplier } from '../commitApplier.ts';
import { isContentError } from '../../errors/contentErrors.ts';
import { serializeCommit } from '../git/commitObject.ts';
import type { ObjectType } from '../git/objects.ts';
import { PackBuilder } from '../git/packWriter.ts';
import type { Repo } from '../git/repo.ts';
import { planBulkWrite } from '../largeCommit.ts';
import type { TimeSlice } from '../timeSlice.ts';
import { formatMessageSliced, type NodeChange } from '../trailers.ts';
import type { Actor, CommitResult, NodeInfo } from '../types.ts';
import { CallRejected, commitHeader, commitMessage, isIndexedFolder, isoTime, pathsOf, type BuildTarget, type CommitCall } from './commitBuilder.ts';
import { moveMain } from './mainRef.ts';

/**
 * A large bulk write as one commit without holding the event loop (see ProjectWriter.runLarge):
 * writeSlicedCommit plans it in memory (index reads only), hashes it and writes its pack in time
 * slices and moves `main`; indexSlicedCommit then writes the index in short transactions. Between
 * the two a marker file names the commit, so that a crash in between is repaired from git.
 */

/** A commit on main whose index is not written yet. */
export interface SlicedCommit {
  commitId: string;
  changes: NodeChange[];
  folderHashes: [string, string][];
  actor: Actor;
  message: string;
  seconds: number;
  projectVersion: number;
  commitsSinceRepack: number;
}

/** Present while a large commit is on main but not fully indexed. */
export function indexingMarker(repo: Repo): string {
  return join(repo.gitdir, 'cns-indexing');
}

/**
 * Plans `call` on `target.work` and writes it to git; null when it changes nothing. A content
 * error of the plan is a CallRejected and leaves the tree as it was; RefMoved/RefLocked when
 * main could not be moved.
 */
export async function writeSlicedCommit(target: BuildTarget, call: CommitCall, slice: TimeSlice): Promise<SlicedCommit | null> {
  const { projectId, index, repo, work, head: before } = target;
  const st = index.indexState(projectId);
  const pack = new PackBuilder();
  work.begin();
  let changes: NodeChange[];
  try {
    changes = await planBulkWrite({ projectId, index, tree: work, repo, pack, slice }, call.mutations as never);
  } catch (e) {
    work.revert();
    throw isContentError(e) ? new CallRejected(e) : e;
  }
  if (changes.length === 0) {
    work.keep();
    return null;
  }
  const folderHashes: [string, string][] = [];
  const writeObject = (type: ObjectType, content: Buffer) => pack.add(type, content);
  const tree = await work.hashSliced(writeObject, (path, oid) => {
    if (isIndexedFolder(path)) folderHashes.push([path, oid]);
  }, slice);
  const seconds = Math.floor(Date.now() / 1000);
  const message = commitMessage(call, pathsOf(index, projectId));
  const full = await formatMessageSliced(message, call.actor, changes, () => slice.tick(), call.trailers);
  await slice.yield();
  // The header with an empty message ends in the blank line; the message bytes follow.
  const header = serializeCommit(commitHeader(call, tree, before, seconds, ''));
  const commitId = await pack.addSliced('commit', Buffer.concat([header, full]), slice);
  await slice.yield();
  await repo.writePackSliced(pack, slice);
  repo.syncObjectDirs();
  await writeFile(indexingMarker(repo), commitId + '\n');
  try {
    target.fence?.();
    moveMain(repo, before, commitId);
  } catch (e) {
    await unlink(indexingMarker(repo)).catch(() => {});
    throw e;
  }
  work.keep();
  return {
    commitId,
    changes,
    folderHashes,
    actor: call.actor,
    message,
    seconds,
    projectVersion: (st?.projectVersion ?? 0) + 1,
    commitsSinceRepack: (st?.commitsSinceRepack ?? 0) + 1,
  };
}

/**
 * Writes the index of a commit writeSlicedCommit put on main, in short transactions with yields
 * in between; the project's index state names the commit only in the last one, and the marker
 * goes after it. Readers may see the commit's nodes appear before it is acknowledged.
 */
export async function indexSlicedCommit(target: BuildTarget, commit: SlicedCommit, slice: TimeSlice): Promise<CommitResult> {
  const { projectId, index, db } = target;
  const { commitId, changes, folderHashes, projectVersion } = commit;
  const applier = new CommitApplier(index, {
    projectId, projectVersion, actor: commit.actor, message: commit.message, time: isoTime(commit.seconds),
  });
  const steps = (function* () {
    for (const c of changes) yield () => applier.apply(c);
    for (const [path, oid] of folderHashes) yield () => { index.setFolderHash(projectId, path, oid); };
    const fin = applier.finalizeSteps(commitId);
    for (;;) {
      let done = false;
      yield () => { done = fin.next().done === true; };
      if (done) return;
    }
  })();
  let finished = false;
  while (!finished) {
    db.transaction(() => {
      target.fence?.();
      while (!slice.due()) {
        const step = steps.next();
        if (step.done) {
          finished = true;
          index.setIndexState(projectId, { headCommit: commitId, projectVersion, commitsSinceRepack: commit.commitsSinceRepack });
          return;
        }
        step.value();
      }
    }).immediate();
    await slice.yield();
  }
  await unlink(indexingMarker(target.repo)).catch(() => {});
  const nodes: NodeInfo[] = [];
  for (const c of changes) {
    await slice.tick();
    const n = index.nodeById(projectId, c.id);
    if (n) nodes.push(n);
  }
  return { changed: true, commitId, projectVersion, nodes };
}
