import { z } from 'zod';
import { blameNode } from '../../commands/blameNode.ts';
import { diffNodeVersions } from '../../commands/diffNodeVersions.ts';
import { diffProject } from '../../commands/diffProject.ts';
import { listNodeVersions } from '../../commands/listNodeVersions.ts';
import { listProjectCommits } from '../../commands/listProjectCommits.ts';
import { readNodeVersion } from '../../commands/readNodeVersion.ts';
import { rollbackNode } from '../../commands/rollbackNode.ts';
import { rollbackPath } from '../../commands/rollbackPath.ts';
import { invalidField } from '../../errors/domainError.ts';
import { presentBlame } from '../../presenters/blame.ts';
import { presentNodeRollback, presentPathRollback } from '../../presenters/changes.ts';
import { presentNodeDiff, presentNodeVersion, presentProjectCommits, presentProjectDiff, presentVersionList } from '../../presenters/history.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { endpointPath, grantIn, projectOf, viaOf, type CallContext } from '../context.ts';
import { jsonInput, parseArgs, withPaths, type McpTool } from './mcpTool.ts';

/**
 * stat, versions, diff and rollback: the content store's reads and writes behind the policy,
 * answering what the path-addressed REST surface answers for the same request (one presenter).
 */

const path = z.string().max(4096);
const version = z.number().int().min(1);

/** A path argument resolved in the endpoint's folder and checked against the caller's grant. */
async function resolved(c: CallContext, action: 'content:read' | 'content:write', raw: string | undefined, field = 'arguments.path') {
  const g = await grantIn(c, action);
  const p = endpointPath(c, raw, field);
  c.env.access.requirePath(g, p);
  return { g, path: p };
}

const statInput = z.object({ path: path.optional() }).strict();

export const statTool: McpTool = {
  name: 'stat',
  title: "A node's metadata",
  description: "A node's metadata without its content: type, size, MIME type, version, children count (folders), times.",
  annotations: { readOnlyHint: true, openWorldHint: false },
  writes: false,
  inputSchema: (c) => withPaths(jsonInput(statInput), c, { path: 'the node' }),
  async run(c, args) {
    const a = parseArgs(statInput, args);
    const { path: p } = await resolved(c, 'content:read', a.path);
    return nodePresenter(c.env.content, 'path').node(c.env.content.statPath(projectOf(c), p));
  },
};

const versionsInput = z
  .object({
    path: path.optional(),
    version: version.optional().describe("with path: that version's record and content"),
    limit: z.number().int().min(1).max(1000).optional().describe('most entries (default 50)'),
    before: version.optional().describe('without path: commits before this project version (the next_before of the previous page)'),
  })
  .strict();

export const versionsTool: McpTool = {
  name: 'versions',
  title: 'Version history',
  description:
    "With `path`: the node's versions, newest first (who, when, message, project_version); with `version` too: that version with its content. " +
    "Without `path`: the project's commits that changed something beneath the endpoint's folder, newest first, each with its changed paths.",
  annotations: { readOnlyHint: true, openWorldHint: false },
  writes: false,
  inputSchema: (c) => withPaths(jsonInput(versionsInput), c, { path: 'the node (leave out for the commits of the whole folder)' }),
  async run(c, args) {
    const a = parseArgs(versionsInput, args);
    if (a.path === undefined) {
      if (a.version !== undefined) throw invalidField('arguments.version', 'version needs a path');
      const { g } = await resolved(c, 'content:read', undefined);
      return presentProjectCommits(listProjectCommits(c.env, g, { limit: a.limit ?? 50, before: a.before, within: c.root }));
    }
    if (a.before !== undefined) throw invalidField('arguments.before', 'before pages the commits of the folder: leave out path');
    const { path: p } = await resolved(c, 'content:read', a.path);
    const node = c.env.content.getByPath(projectOf(c), p);
    if (a.version !== undefined) return presentNodeVersion(await readNodeVersion(c.env, node, a.version));
    return presentVersionList(listNodeVersions(c.env, node, { limit: a.limit ?? 50 }));
  },
};

const diffInput = z
  .object({
    path: path.optional(),
    v1: z.number().int().min(0).describe('the older version (with path: of the node; without: a project version)'),
    v2: z.number().int().min(1).describe('the newer version'),
  })
  .strict();

export const diffTool: McpTool = {
  name: 'diff',
  title: 'Compare versions',
  description:
    'With `path`: two versions of a node (a unified diff for text, a JSON Patch for JSON, sizes and hashes for binary files). ' +
    'Without `path`: every path beneath the endpoint\'s folder changed between project versions v1 < v2, with what happened to it.',
  annotations: { readOnlyHint: true, openWorldHint: false },
  writes: false,
  inputSchema: (c) => withPaths(jsonInput(diffInput), c, { path: 'the node (leave out to compare project versions)' }),
  async run(c, args) {
    const a = parseArgs(diffInput, args);
    if (a.path === undefined) {
      const { g } = await resolved(c, 'content:read', undefined);
      return presentProjectDiff(diffProject(c.env, g, { v1: a.v1, v2: a.v2, within: c.root }));
    }
    const { path: p } = await resolved(c, 'content:read', a.path);
    return presentNodeDiff(await diffNodeVersions(c.env, c.env.content.getByPath(projectOf(c), p), a.v1, a.v2));
  },
};

const blameInput = z
  .object({
    path,
    version: version.optional().describe('a version of the file (default: the current one)'),
  })
  .strict();

export const blameTool: McpTool = {
  name: 'blame',
  title: 'Who wrote each line',
  description:
    'For a Markdown, text or JSON file: runs of lines (1-based, inclusive) with the commit that last changed them, and each commit once with its ' +
    'version, actor_type (user or agent), author, time and message; for JSON also each key path (RFC 6901 pointer). Follows renames and moves.',
  annotations: { readOnlyHint: true, openWorldHint: false },
  writes: false,
  inputSchema: (c) => withPaths(jsonInput(blameInput), c, { path: 'the file' }),
  async run(c, args) {
    const a = parseArgs(blameInput, args);
    const { path: p } = await resolved(c, 'content:read', a.path);
    return presentBlame(await blameNode(c.env, c.env.content.getByPath(projectOf(c), p), a.version));
  },
};

const rollbackInput = z
  .object({
    path,
    version: version.optional().describe('a version of the node: it becomes the new version'),
    target_version: z.number().int().min(0).optional().describe('a project version: the node, or the folder with everything beneath it, returns to its state then'),
    message: z.string().max(1000).optional(),
  })
  .strict();

export const rollbackTool: McpTool = {
  name: 'rollback',
  title: 'Roll back',
  description:
    'Returns a node to one of its versions (`version`), or a node or folder to its state at a project version (`target_version`), as a new version: ' +
    'nothing is lost, and the rollback itself can be rolled back.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  writes: true,
  inputSchema: (c) => withPaths(jsonInput(rollbackInput), c, { path: 'the node or folder' }),
  async run(c, args) {
    const a = parseArgs(rollbackInput, args);
    if ((a.version === undefined) === (a.target_version === undefined)) throw invalidField('arguments.version', 'give exactly one of version and target_version');
    const { g, path: p } = await resolved(c, 'content:write', a.path);
    const { content } = c.env;
    const note = { message: a.message, via: viaOf(c) };
    if (a.target_version !== undefined) return presentPathRollback(content, await rollbackPath(c.env, g, { ...note, path: p, targetVersion: a.target_version }));
    return presentNodeRollback(content, await rollbackNode(c.env, g, { ...note, node: content.getByPath(projectOf(c), p), version: a.version! }));
  },
};
