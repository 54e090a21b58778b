import type { Actor, ContentStore } from '../../content/contentStore.ts';
import { NotFoundError, ValidationError } from '../../errors/contentErrors.ts';
import type { ChangeEntry, Changelog, CommitChanges } from '../../events/changelog.ts';
import { scopedCommit, scopedEntry } from '../../events/scopedChanges.ts';
import { nodePresenter } from '../shared/idPaths.ts';
import { rollbackNodeTo } from '../shared/history.ts';

/**
 * Project-level history on the path surface: the commits of a project (newest first) and the
 * paths that changed between two project versions, both as seen from the caller's scope.
 */

/** Commits before `before` (exclusive; default: all), newest first, `limit` at most. */
export function projectCommitsOf(changelog: Changelog, projectId: string, scope: string, options: { limit: number; before?: number }) {
  const current = changelog.latest(projectId);
  const upTo = Math.min(current, (options.before ?? current + 1) - 1);
  const commits: CommitChanges[] = [];
  // Scoped callers skip invisible commits, so read in windows until the page is full.
  let high = upTo;
  while (high > 0 && commits.length < options.limit) {
    const low = Math.max(0, high - Math.max(options.limit, 100));
    const window = changelog.commits(projectId, low, high - low).reverse();
    for (const c of window) {
      const visible = scopedCommit(scope, c);
      if (visible) commits.push(visible);
      if (commits.length === options.limit) break;
    }
    high = low;
  }
  const last = commits[commits.length - 1];
  return {
    current_version: current,
    commits: commits.map(presentCommit),
    // Pass back as `before` for the next page; null when this page reached the first commit.
    next_before: last && commits.length === options.limit && last.projectVersion > 1 ? last.projectVersion : null,
  };
}

function presentCommit(c: CommitChanges) {
  return {
    version: c.projectVersion,
    commit_id: c.commitId,
    actor_type: c.actor.type,
    actor_id: c.actor.id,
    author: c.actor.author,
    message: c.message,
    created_at: c.createdAt,
    changes: c.changes.map((e) => ({ path: e.path, old_path: e.oldPath, action: e.action, node_id: e.nodeId, version: e.version })),
  };
}

type PathOperation = 'added' | 'modified' | 'moved' | 'deleted';

/** Each node changed between project versions v1 and v2 (v1 < v2), once, with what happened to it overall. */
export function projectDiffOf(changelog: Changelog, projectId: string, scope: string, v1: number, v2: number) {
  const current = changelog.latest(projectId);
  for (const [field, v] of [['v1', v1], ['v2', v2]] as const) {
    if (v > current) throw new NotFoundError(`project version ${v} does not exist`, { [field]: v });
  }
  if (v1 >= v2) throw new ValidationError('v1 must be lower than v2', { v1, v2 });
  const byNode = new Map<string, ChangeEntry[]>();
  for (const raw of changelog.between(projectId, v1, v2)) {
    const e = scopedEntry(scope, raw);
    if (!e) continue;
    const list = byNode.get(e.nodeId) ?? [];
    list.push(e);
    byNode.set(e.nodeId, list);
  }
  const changes = [...byNode.values()].map((entries) => {
    const first = entries[0]!;
    const last = entries[entries.length - 1]!;
    const before = first.oldPath ?? (first.action === 'create' ? null : first.path);
    const after = last.action === 'delete' || last.path.startsWith('.trash/') ? null : last.path;
    let operation: PathOperation;
    if (before === null && after === null) return null; // created and deleted within the range
    else if (before === null || first.action === 'create') operation = 'added';
    else if (after === null) operation = 'deleted';
    else if (before !== after) operation = 'moved';
    else operation = 'modified';
    return { path: after ?? before ?? '', old_path: operation === 'moved' ? before : null, operation, node_id: first.nodeId, type: last.nodeType };
  });
  const visible = changes.filter((c): c is NonNullable<typeof c> => c !== null).sort((a, b) => a.path.localeCompare(b.path));
  return { v1, v2, changes: visible };
}

/**
 * Rolls back one path (a node, or a folder with everything beneath it) to its state at project
 * version `target`; nothing outside the path changes.
 */
export async function rollbackPathTo(store: ContentStore, projectId: string, actor: Actor, path: string, target: number, message?: string) {
  const node = store.getByPath(projectId, path);
  if (target > store.projectVersion(projectId)) {
    throw new NotFoundError(`project version ${target} does not exist`, { target_version: target });
  }
  if (node.type === 'folder') {
    const r = await store.rollbackFolder(projectId, actor, node.id, { projectVersion: target }, { message });
    const present = nodePresenter(store, 'path');
    return {
      data: { path, target_version: target, changed: r.changed, project_version: r.projectVersion, commit_id: r.commitId, nodes: r.nodes.map((n) => present.node(n)) },
      message: `${path} rolled back to project version ${target}`,
    };
  }
  const at = store.versionAtProjectVersion(projectId, { id: node.id }, target);
  if (!at) throw new ValidationError(`${path} did not exist at project version ${target}`, { target_version: target });
  if (at.path.startsWith('.trash/')) throw new ValidationError(`${path} was in the trash at project version ${target}`, { target_version: target });
  const r = await rollbackNodeTo(store, node, actor, at.version, message);
  return { data: { ...r.data, target_version: target }, message: `${path} rolled back to project version ${target}` };
}
