import { z } from 'zod';
import { makeFolder } from '../../commands/makeFolder.ts';
import { moveNode } from '../../commands/moveNode.ts';
import { removeNode } from '../../commands/removeNode.ts';
import { invalidField } from '../../errors/domainError.ts';
import { presentFolderMade, presentMove, presentRemoval } from '../../presenters/changes.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { endpointPath, grantIn, viaOf, type CallContext } from '../context.ts';
import { jsonInput, parseArgs, withPaths, type McpTool } from './mcpTool.ts';

/** mkdir, mv and rm: the commands behind the policy, one version each, answered as the path routes answer (plus the project version). */

const path = z.string().max(4096);
const message = z.string().max(1000).optional().describe('why (recorded with the version; generated when left out)');

/** The paths of a change, resolved in the endpoint's folder; the folder itself is not changed through its own endpoint. */
async function changing(c: CallContext, raws: [string, string][]) {
  const g = await grantIn(c, 'content:write');
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
    const { g, paths: [p] } = await changing(c, [['arguments.path', a.path]]);
    const r = await makeFolder(c.env, g, { path: p!, message: a.message, via: viaOf(c) });
    return { ...presentFolderMade(nodePresenter(c.env.content, 'path'), r), project_version: r.projectVersion };
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
    const { g, paths: [from, to] } = await changing(c, [['arguments.from', a.from], ['arguments.to', a.to]]);
    notTheRoot(c, from!, 'arguments.from', 'moved');
    const r = await moveNode(c.env, g, { from: from!, to: to!, message: a.message, via: viaOf(c) });
    return { ...presentMove(nodePresenter(c.env.content, 'path'), r), project_version: r.projectVersion };
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
    const { g, paths: [p] } = await changing(c, [['arguments.path', a.path]]);
    notTheRoot(c, p!, 'arguments.path', 'deleted');
    return presentRemoval(await removeNode(c.env, g, { target: { path: p! }, permanent: a.permanent, message: a.message, via: viaOf(c) }));
  },
};
