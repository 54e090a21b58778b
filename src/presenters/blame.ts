import { z } from 'zod';
import type { NodeBlame } from '../content/contentStore.ts';

/**
 * A blame as every surface answers it (path and id routes, the tools library, MCP): runs of
 * lines with the commit that last changed them, each commit once with who made it (actor type
 * `user` or `agent`), and for JSON each key path's commit.
 */
export function presentBlame(b: NodeBlame) {
  const ranges: { start_line: number; end_line: number; commit_id: string }[] = [];
  b.origins.forEach((commit, i) => {
    const last = ranges[ranges.length - 1];
    if (last && last.commit_id === commit && last.end_line === i) last.end_line = i + 1;
    else ranges.push({ start_line: i + 1, end_line: i + 1, commit_id: commit });
  });
  const commits = [...b.commits.values()]
    .sort((x, y) => (y.projectVersion ?? -1) - (x.projectVersion ?? -1))
    .map((c) => ({
      commit_id: c.commitId,
      version: c.nodeVersion,
      project_version: c.projectVersion,
      actor_type: c.actorType,
      actor_id: c.actorId,
      author: c.author,
      authored_by: c.commitAuthor,
      message: c.message,
      created_at: c.createdAt,
    }));
  return {
    id: b.node.id,
    path: b.version.path,
    type: b.version.type,
    version: b.version.version,
    project_version: b.version.projectVersion,
    commit_id: b.version.commitId,
    line_count: b.origins.length,
    ranges,
    commits,
    keys: b.keys?.map((k) => ({ pointer: k.pointer, commit_id: k.commitId })) ?? null,
    keys_truncated: b.keysTruncated,
  };
}

const int = z.number().int();
export const blameSchema = z.object({
  id: z.string(),
  path: z.string().describe('the path at the blamed version'),
  type: z.string(),
  version: int.describe('the blamed version of the node'),
  project_version: int,
  commit_id: z.string(),
  line_count: int,
  ranges: z.array(z.object({ start_line: int, end_line: int, commit_id: z.string() })).describe('consecutive lines (1-based, inclusive) last changed by one commit'),
  commits: z
    .array(
      z.object({
        commit_id: z.string(),
        version: int.nullable().describe("the node's version that commit made; null when the lines came from another file (an older one at the path)"),
        project_version: int.nullable(),
        actor_type: z.string().nullable().describe('user or agent'),
        actor_id: z.string().nullable(),
        author: z.string(),
        authored_by: z.string().nullable(),
        message: z.string(),
        created_at: z.string(),
      }),
    )
    .describe('each commit the ranges name, newest first'),
  keys: z.array(z.object({ pointer: z.string(), commit_id: z.string() })).nullable().describe('JSON: each leaf (scalar or empty container) by RFC 6901 pointer; null for other types'),
  keys_truncated: z.boolean(),
});
