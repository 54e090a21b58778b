import { MergeConflictError } from '../../collab/collabCommit.ts';
import { mergeNode } from '../../collab/threeWayMerge.ts';
import type { Actor, ContentStore, Mutation, NodeInfo, WritableNodeType } from '../../content/contentStore.ts';
import { ConflictError, decodeContent } from '../../content/contentStore.ts';
import { hashObject } from '../../content/git/objects.ts';
import { isSameOrInside } from '../../content/paths.ts';
import type { DraftRow } from './workspaceStore.ts';

/** One path the completion wrote. */
export interface CompletedChange {
  path: string;
  action: 'created' | 'updated' | 'deleted';
  type: WritableNodeType | 'folder';
  /** True when the draft was merged three ways with live changes made since its base. */
  merged: boolean;
}

/** A path that could not be merged, in the collab commit's shape (`kind`, `regions`). */
export interface DraftConflict {
  path: string;
  node_id: string | null;
  type: WritableNodeType | 'folder';
  base_version: number | null;
  current_version: number | null;
  kind: string;
  regions: unknown[];
  merged_text?: string;
}

interface Plan {
  mutations: Mutation[];
  changes: CompletedChange[];
  conflicts: DraftConflict[];
  guard: () => void;
}

/** How often the plan is rebuilt when another writer commits between planning and committing. */
const ATTEMPTS = 3;

/**
 * Writes the draft into the live content as ONE commit by `actor`, each path against the live
 * version its draft started from: unchanged live, the draft is written; changed live, the two are
 * merged three ways (the collab merge: text by lines, json by keys, files when one side kept the
 * bytes). Any conflict writes nothing and throws MergeConflictError (409) with every conflict.
 * Every write carries the live version it was planned against and the removals are guarded, so a
 * concurrent write is never lost: the plan is rebuilt against it.
 */
export async function completeDraft(content: ContentStore, projectId: string, actor: Actor, rows: readonly DraftRow[], message: string): Promise<{ version: number | null; changes: CompletedChange[] }> {
  for (let attempt = 1; ; attempt++) {
    const plan = await planCompletion(content, projectId, rows);
    if (plan.conflicts.length) {
      throw new MergeConflictError(`${plan.conflicts.length} path(s) of the workspace could not be merged with the live content; nothing was written and the workspace is kept`, {
        conflicts: plan.conflicts,
      });
    }
    if (plan.mutations.length === 0) return { version: null, changes: [] };
    try {
      const r = await content.commit(projectId, actor, plan.mutations, { message, guard: plan.guard });
      return { version: r.projectVersion, changes: r.changed ? plan.changes : [] };
    } catch (e) {
      if (!(e instanceof ConflictError) || e instanceof MergeConflictError || attempt >= ATTEMPTS) throw e;
    }
  }
}

async function planCompletion(content: ContentStore, projectId: string, rows: readonly DraftRow[]): Promise<Plan> {
  const head = content.projectVersion(projectId);
  const liveAt = (p: string) => {
    const n = content.findByPath(projectId, p);
    return n && n.state === 'active' ? n : null;
  };
  const removals: Mutation[] = [];
  const writes: Mutation[] = [];
  const changes: CompletedChange[] = [];
  const conflicts: DraftConflict[] = [];
  // Live nodes the plan relies on as they are now: the commit is refused if any changed before it is built.
  const expected: NodeInfo[] = [];
  const removed = new Set<string>();
  const conflict = (row: DraftRow, live: NodeInfo | null, kind: string, reason: string) =>
    conflicts.push({ path: row.path, node_id: live?.id ?? row.baseNodeId, type: row.type, base_version: row.baseVersion, current_version: live?.version ?? null, kind, regions: [{ reason }] });
  /** Whether anything at, beneath or above `path` changed live since `since`. */
  const changedSince = (path: string, since: number) =>
    head > since && content.changesBetween(projectId, since, head).some((c) => [c.path, c.oldPath].some((p) => p !== null && (isSameOrInside(p, path) || isSameOrInside(path, p))));
  const remove = (live: NodeInfo) => {
    removals.push({ op: 'remove', path: live.path });
    expected.push(live);
    removed.add(live.path);
  };
  const writtenBeneath = (path: string) => rows.some((r) => r.action === 'written' && r.path.startsWith(`${path}/`));

  for (const row of rows.filter((r) => r.action === 'deleted')) {
    const live = liveAt(row.path);
    if (!live) continue;
    if (live.id !== row.baseNodeId) conflict(row, live, 'replaced', 'deleted in the workspace, but another node is there live now');
    else if (row.type === 'folder' ? changedSince(row.path, row.baseProjectVersion) : live.version !== row.baseVersion) {
      conflict(row, live, 'changed', `deleted in the workspace, but changed live since (version ${row.baseVersion} → ${live.version})`);
    } else {
      remove(live);
      changes.push({ path: row.path, action: 'deleted', type: live.type, merged: false });
    }
  }

  for (const row of rows.filter((r) => r.action === 'written')) {
    const live = liveAt(row.path);
    const blocked = foldersAbove(row.path).find((p) => !removed.has(p) && (liveAt(p)?.type ?? 'folder') !== 'folder');
    if (blocked) {
      conflict(row, live, 'blocked', `${blocked} is a file live now, where the workspace has a folder`);
      continue;
    }
    // The draft replaces a live node of the other kind (a folder by a file or back): if it is as drafted from, it goes first.
    const replaces = live !== null && (live.type === 'folder') !== (row.type === 'folder');
    if (replaces) {
      const untouched = live.id === row.baseNodeId && (live.type === 'folder' ? !changedSince(row.path, row.baseProjectVersion) : live.version === row.baseVersion);
      if (!untouched) {
        conflict(row, live, 'replaced', `the workspace has a ${row.type === 'folder' ? 'folder' : 'file'} here, and the live ${live.type === 'folder' ? 'folder' : 'file'} changed since`);
        continue;
      }
      remove(live);
    }
    const now = replaces ? null : live;
    if (row.type === 'folder') {
      if (now || writtenBeneath(row.path)) continue;
      writes.push({ op: 'mkdir', path: row.path });
      changes.push({ path: row.path, action: replaces ? 'updated' : 'created', type: 'folder', merged: false });
      continue;
    }
    const type = row.type;
    const bytes = row.content ?? Buffer.alloc(0);
    if (!now) {
      if (row.baseNodeId !== null && !replaces) {
        conflict(row, null, 'deleted', 'changed in the workspace, but deleted or moved live since');
        continue;
      }
      writes.push({ op: 'write', path: row.path, type, content: decodeContent(type, bytes), baseVersion: 0 });
      changes.push({ path: row.path, action: replaces ? 'updated' : 'created', type, merged: false });
      continue;
    }
    const same = now.type === type && now.contentHash === hashObject('blob', bytes);
    if (row.baseNodeId === null) {
      if (!same) conflict(row, now, 'created', 'created in the workspace and, with other content, live since');
      continue;
    }
    if (now.id !== row.baseNodeId || row.baseVersion === null || now.version < row.baseVersion) {
      conflict(row, now, 'replaced', 'changed in the workspace, but the node there live is another one now');
      continue;
    }
    if (same) continue;
    if (now.type !== type) {
      conflict(row, now, 'type', `the node changed type from ${type} to ${now.type} live`);
      continue;
    }
    if (now.version === row.baseVersion) {
      writes.push({ op: 'write', path: row.path, type, content: decodeContent(type, bytes), baseVersion: now.version });
      changes.push({ path: row.path, action: 'updated', type, merged: false });
      continue;
    }
    const [base, current] = await Promise.all([content.versionContent(projectId, { id: now.id }, row.baseVersion), content.readContent(projectId, { id: now.id })]);
    if (base.version.type !== type) {
      conflict(row, now, 'type', `the node changed type from ${base.version.type} to ${now.type} live`);
      continue;
    }
    const r = mergeNode({
      type,
      base: decodeContent(type, base.bytes),
      current: decodeContent(type, current.bytes),
      incoming: decodeContent(type, bytes),
      baseVersion: row.baseVersion,
      currentVersion: now.version,
    });
    if (!r.clean) {
      conflicts.push({
        path: row.path,
        node_id: now.id,
        type,
        base_version: row.baseVersion,
        current_version: now.version,
        kind: r.kind,
        regions: r.conflicts,
        ...('marked' in r ? { merged_text: r.marked } : {}),
      });
      continue;
    }
    writes.push({ op: 'write', path: row.path, type, content: r.merged, baseVersion: now.version });
    changes.push({ path: row.path, action: 'updated', type, merged: true });
  }

  const guard = () => {
    for (const node of expected) {
      const now = content.findByPath(projectId, node.path);
      if (!now || now.id !== node.id || now.state !== 'active' || now.version !== node.version || now.contentHash !== node.contentHash) {
        throw new ConflictError(`${node.path} changed while the workspace was being completed`, { path: node.path, current_version: now?.version ?? null });
      }
    }
  };
  return { mutations: [...removals, ...writes], changes, conflicts, guard };
}

/** The folders above a path, top down. */
function foldersAbove(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
