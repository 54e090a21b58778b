import { z } from 'zod';
import type { NodeVersion } from '../commands/readNodeVersion.ts';
import type { ProjectCommits } from '../commands/listProjectCommits.ts';
import type { PathChange } from '../commands/diffProject.ts';
import type { NodeInfo, VersionList } from '../content/contentStore.ts';
import type { DiffChange } from '../content/diffChanges.ts';
import type { VersionDiff } from '../content/versionDiff.ts';
import type { CommitChanges } from '../events/changelog.ts';
import { contentFieldsSchema, presentContent, presentVersion, versionSchema } from './content.ts';
import { puppyOneOnly } from './compat.ts';
import { itemsSchema, withItems } from './items.ts';
import { nodeTypeSchema } from './node.ts';

/**
 * History as every surface answers it (the path routes, the id routes and their /collab twins,
 * MCP's versions and diff): the same node or project gives the same answer whichever way it is
 * asked.
 */

export function presentVersionList(r: VersionList & { node: NodeInfo }) {
  const versions = r.versions.map(presentVersion);
  return { id: r.node.id, path: r.node.path, ...withItems('versions', versions), total: r.total, current_version: r.currentVersion, ...puppyOneOnly(() => ({ commits: versions.map(asPuppyOneCommit) })) };
}

/** A node version as PuppyOne's clients list history: `version` is the project version (what their rollback takes), `who` the author. */
function asPuppyOneCommit(v: ReturnType<typeof presentVersion>) {
  return { version: v.project_version, node_version: v.version, who: v.author, message: v.message, created_at: v.created_at, commit_id: v.commit_id, operation: v.operation };
}

/** One version's record with its complete content (none for folder versions). */
export function presentNodeVersion(r: NodeVersion) {
  const base = { id: r.node.id, ...presentVersion(r.version) };
  if (!r.bytes) return base;
  const content = presentContent(r.version.type, r.bytes);
  // PuppyOne's clients read a json version as content_json (markdown is content_text already)
  return r.version.type === 'json' ? { ...base, ...content, ...puppyOneOnly(() => ({ content_json: content.content })) } : { ...base, ...content };
}

export function presentNodeDiff(r: { node: NodeInfo; v1: number; v2: number; diff: VersionDiff; changes: DiffChange[] }) {
  return { id: r.node.id, path: r.node.path, v1: r.v1, v2: r.v2, ...r.diff, changes: r.changes };
}

export function presentProjectCommits(r: ProjectCommits) {
  return { current_version: r.currentVersion, commits: r.commits.map(presentCommit), next_before: r.nextBefore };
}

function presentCommit(c: CommitChanges) {
  return {
    version: c.projectVersion,
    commit_id: c.commitId,
    actor_type: c.actor.type,
    actor_id: c.actor.id,
    author: c.actor.author,
    who: c.actor.author, // PuppyOne's name for author
    authored_by: c.actor.commitAuthor ?? null,
    message: c.message,
    created_at: c.createdAt,
    changes: c.changes.map((e) => ({ path: e.path, old_path: e.oldPath, action: e.action, node_id: e.nodeId, version: e.version })),
  };
}

/**
 * A project's history as PuppyOne's web client reads it (`/collab/project-history`): each commit
 * with `op` on its changes (added, modified, deleted), no conflicts (a conflicting write is
 * refused with 409, never committed with one) and no root hash (a version is named by commit_id).
 */
export function presentPuppyOneProjectHistory(projectId: string, scopePath: string, r: { currentVersion: number; commits: CommitChanges[] }) {
  const commits = r.commits.map((c) => {
    const commit = presentCommit(c);
    return {
      ...commit,
      root_hash: null,
      scope_path: scopePath,
      conflicts: [],
      changes: commit.changes.map((e) => ({ ...e, op: changeOp[e.action] ?? 'modified' })),
    };
  });
  return { project_id: projectId, current_version: r.currentVersion, root_hash: null, commits, total: commits.length };
}

/** PuppyOne's op of a node's change in a commit (a move is a modification, as in a project diff). */
const changeOp: Record<string, 'added' | 'modified' | 'deleted'> = {
  create: 'added',
  restore: 'added',
  update: 'modified',
  rollback: 'modified',
  move: 'modified',
  trash: 'deleted',
  delete: 'deleted',
  moved_out: 'deleted',
};

export function presentProjectDiff(r: { v1: number; v2: number; changes: PathChange[] }) {
  return {
    v1: r.v1,
    v2: r.v2,
    changes: r.changes.map((c) => ({ path: c.path, old_path: c.oldPath, operation: c.operation, node_id: c.nodeId, type: c.type, change_type: changeType[c.operation] })),
  };
}

/** PuppyOne's words for a path's change between two project versions. */
const changeType = { added: 'added', deleted: 'removed', modified: 'modified', moved: 'modified' } as const;

// What the presenters above answer, for the response schemas of the OpenAPI document.

const int = z.number().int();

const puppyOneCommit = z.object({
  version: int.describe('the project version'),
  node_version: int,
  who: z.string(),
  message: z.string().nullable(),
  created_at: z.string(),
  commit_id: z.string(),
  operation: versionSchema.shape.operation,
});
export const versionListSchema = z.object({
  id: z.string(),
  path: z.string(),
  versions: z.array(versionSchema),
  items: itemsSchema(versionSchema, 'versions'),
  total: int,
  current_version: int,
  commits: z.array(puppyOneCommit).optional().describe("with CNS_PUPPYONE_COMPAT: the versions again, as PuppyOne's clients list them (version = project version)"),
});

export const versionWithContentSchema = versionSchema.extend({ id: z.string(), ...contentFieldsSchema, content_json: z.unknown().optional().describe('with CNS_PUPPYONE_COMPAT: json content again, by the name PuppyOne clients read') });

const side = z.object({ size: int, sha256: z.string() });
const lines = { unified_diff: z.string(), added_lines: int, removed_lines: int };
const diffChange = z.object({
  path: z.string().describe("json: the JSON Pointer; text and files: ''"),
  change_type: z.enum(['added', 'removed', 'modified']),
  old_value: z.unknown(),
  new_value: z.unknown(),
});
const diffHead = {
  id: z.string(),
  path: z.string(),
  v1: int,
  v2: int,
  changes: z.array(diffChange).describe("the diff as a flat list of changes, as PuppyOne's clients read it"),
};
export const versionDiffSchema = z.discriminatedUnion('kind', [
  z.object({ ...diffHead, kind: z.literal('text'), ...lines }),
  z.object({ ...diffHead, kind: z.literal('json'), json_patch: z.array(z.record(z.string(), z.unknown())).describe('RFC 6902'), ...lines }),
  z.object({ ...diffHead, kind: z.literal('binary'), from: side, to: side, identical: z.boolean() }),
]);

const commitChange = z.object({ path: z.string(), old_path: z.string().nullable(), action: z.string(), node_id: z.string(), version: int.nullable() });
export const projectCommitsSchema = z.object({
  current_version: int,
  commits: z.array(
    z.object({
      version: int,
      commit_id: z.string(),
      actor_type: z.string(),
      actor_id: z.string(),
      author: z.string(),
      who: z.string().describe('author, by the name PuppyOne clients read'),
      authored_by: z.string().nullable().describe('the author a pushed git commit names, when it is not the actor'),
      message: z.string().nullable(),
      created_at: z.string(),
      changes: z.array(commitChange),
    }),
  ),
  next_before: int.nullable().describe('pass as before for the next page'),
});

const projectCommitSchema = projectCommitsSchema.shape.commits.element;
export const puppyOneProjectHistorySchema = z.object({
  project_id: z.string(),
  current_version: int,
  root_hash: z.null().describe('PuppyOne names a version by a root hash; cns by commit_id'),
  commits: z.array(
    projectCommitSchema.extend({
      root_hash: z.null(),
      scope_path: z.string().describe("the folder the history is seen from ('' = the whole project)"),
      conflicts: z.array(z.never()).describe('always empty: a conflicting write is refused (409), never committed'),
      changes: z.array(commitChange.extend({ op: z.enum(['added', 'modified', 'deleted']) })),
    }),
  ).describe('the first `limit` commits after since_version, newest first'),
  total: int,
});

export const projectDiffSchema = z.object({
  v1: int,
  v2: int,
  changes: z.array(
    z.object({
      path: z.string(),
      old_path: z.string().nullable(),
      operation: z.enum(['added', 'modified', 'moved', 'deleted']),
      node_id: z.string(),
      type: nodeTypeSchema,
      change_type: z.enum(['added', 'removed', 'modified']).describe("operation in PuppyOne's words"),
    }),
  ),
});
