import { z } from 'zod';
import { nodePresenter } from '../../api/shared/idPaths.ts';
import { invalidField } from '../../errors/domainError.ts';
import { endpointPath, grantIn, projectOf, type CallContext } from '../context.ts';
import { generatedMessage } from './libraryTools.ts';
import { jsonInput, parseArgs, withPaths, type McpTool } from './mcpTool.ts';

/** mkdir, mv and rm: one content-store call each behind the policy, one version each. */

const path = z.string().max(4096);
const message = z.string().max(1000).optional().describe('why (recorded with the version; generated when left out)');

/** The paths of a change, resolved in the endpoint's folder; the folder itself is not changed through its own endpoint. */
function changing(c: CallContext, raws: [string, string][]) {
  const g = grantIn(c, 'content:write');
  const paths = raws.map(([field, raw]) => {
    const p = endpointPath(c, raw, field);
    c.env.access.requirePath(g, p);
    return p;
  });
  return { g, paths };
}

function notTheRoot(c: CallContext, p: string, field: string, what: string): void {
  if (p === c.root) throw invalidField(field, `"${p}" is this endpoint's own folder: it cannot be ${what} through the endpoint`);
}

const mkdirInput = z.object({ path, message }).strict();

export const mkdirTool: McpTool = {
  name: 'mkdir',
  title: 'Create a folder',
  description: 'Creates a folder and any missing parents (nothing happens when it exists).',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  writes: true,
  inputSchema: (c) => withPaths(jsonInput(mkdirInput), c, { path: 'the new folder' }),
  async run(c, args) {
    const a = parseArgs(mkdirInput, args);
    const { g, paths: [p] } = changing(c, [['arguments.path', a.path]]);
    const r = await c.env.content.mkdir(projectOf(c), g.actor, p!, { message: a.message ?? generatedMessage(c, `mkdir ${p}`) });
    return { ...nodePresenter(c.env.content, 'path').node(r.node), changed: r.changed, project_version: r.projectVersion };
  },
};

const mvInput = z.object({ from: path, to: path, message }).strict();

export const mvTool: McpTool = {
  name: 'mv',
  title: 'Move or rename',
  description: 'Moves or renames a node (a folder with everything beneath it); ids and histories go with it.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  writes: true,
  inputSchema: (c) => withPaths(jsonInput(mvInput), c, { from: 'the node to move', to: 'its new path' }),
  async run(c, args) {
    const a = parseArgs(mvInput, args);
    const { g, paths: [from, to] } = changing(c, [['arguments.from', a.from], ['arguments.to', a.to]]);
    notTheRoot(c, from!, 'arguments.from', 'moved');
    const r = await c.env.content.move(projectOf(c), g.actor, from!, to!, { message: a.message ?? generatedMessage(c, `move ${from} to ${to}`) });
    return { ...nodePresenter(c.env.content, 'path').node(r.node), old_path: from, changed: r.changed, project_version: r.projectVersion };
  },
};

const rmInput = z
  .object({ path, permanent: z.boolean().optional().describe('delete with its history instead of moving it to the trash (default false)'), message })
  .strict();

export const rmTool: McpTool = {
  name: 'rm',
  title: 'Delete',
  description: 'Moves a node (a folder with everything beneath it) to the trash, where it can be restored; `permanent` deletes it with its history.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  writes: true,
  inputSchema: (c) => withPaths(jsonInput(rmInput), c, { path: 'the node to delete' }),
  async run(c, args) {
    const a = parseArgs(rmInput, args);
    const { g, paths: [p] } = changing(c, [['arguments.path', a.path]]);
    notTheRoot(c, p!, 'arguments.path', 'deleted');
    const { content } = c.env;
    const before = content.getByPath(projectOf(c), p!);
    const permanent = a.permanent ?? false;
    const r = await content.remove(projectOf(c), g.actor, p!, { permanent, message: a.message ?? generatedMessage(c, `${permanent ? 'delete' : 'trash'} ${p}`) });
    const trashed = permanent ? null : (r.nodes.find((n) => n.id === before.id) ?? null);
    return { id: before.id, path: before.path, permanent, trash_path: trashed?.path ?? null, project_version: r.projectVersion };
  },
};
