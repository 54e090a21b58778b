import { projectOf, type CallContext } from './context.ts';
import { boundTool, mcpName } from './tools/boundTools.ts';
import { mkdirTool, mvTool, rmTool } from './tools/changeTools.ts';
import { blameTool, diffTool, rollbackTool, statTool, versionsTool } from './tools/historyTools.ts';
import { catTool, grepTool, lsTool, searchTool, searchToolOf, treeTool, writeTool } from './tools/libraryTools.ts';
import type { Lookup, McpTool } from './tools/mcpTool.ts';

/** The built-in tools in the order clients list them; `search` joins when the project has an index over the folder. */
const builtins: McpTool[] = [lsTool, catTool, statTool, treeTool, searchTool, grepTool, versionsTool, diffTool, blameTool, writeTool, mkdirTool, mvTool, rmTool, rollbackTool];
const builtinByName = new Map(builtins.map((t) => [t.name, t]));

/** Write tools are offered on read_write endpoints to callers who may write the project (the endpoint's key, or a user with an editing role). */
export async function mayWrite(c: CallContext): Promise<boolean> {
  if (c.endpoint.connection.mode !== 'read_write') return false;
  try {
    await c.env.authorizer.requireProject(c.principal, projectOf(c), 'content:write');
    return true;
  } catch {
    return false;
  }
}

/** Every tool this caller is offered on this endpoint now (the list follows the endpoint's mode and bound tools). */
export async function toolsOf(c: CallContext): Promise<McpTool[]> {
  const write = await mayWrite(c);
  const bound = await c.env.endpoints.boundTools(c.endpoint);
  const hasSearch = (await searchToolOf(c, bound)) !== null;
  const list = builtins.filter((t) => (write || !t.writes) && (t !== searchTool || hasSearch));
  const taken = new Set(builtins.map((t) => t.name));
  for (const record of bound) {
    const name = mcpName(record.name, record.type, taken);
    taken.add(name);
    const tool = boundTool(c, record, name);
    if (write || !tool.writes) list.push(tool);
  }
  return list;
}

/**
 * The tool a call names. Built-in tools are found without building the whole list (a `cat`
 * costs no look-up of bound tools); a write tool this caller is not offered is refused saying why.
 */
export async function findTool(c: CallContext, name: string): Promise<Lookup> {
  const builtin = builtinByName.get(name);
  if (builtin) {
    if (builtin.writes && !(await mayWrite(c))) {
      return {
        refused:
          c.endpoint.connection.mode === 'read'
            ? `This MCP endpoint is read-only: "${name}" is not available (its tools only read).`
            : `Your role on this project does not allow changes: "${name}" is not available to you.`,
      };
    }
    if (builtin === searchTool && (await searchToolOf(c)) === null) return null;
    return { tool: builtin };
  }
  const tool = (await toolsOf(c)).find((t) => t.name === name);
  if (tool) return { tool };
  return null;
}
