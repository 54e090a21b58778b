import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { toolServer, type ServerOptions } from '../server.ts';
import { toolWrites } from '../../agents/tools/reach.ts';
import { agentToolsOf, findAgentTool, offeredBindings } from './catalog.ts';
import type { AgentCallContext } from './context.ts';

/** The server's `instructions`: whose tools these are, where each works, and that changes are the agent's versions. */
export async function agentInstructionsFor(c: AgentCallContext): Promise<string> {
  const { connection, settings } = c.agent;
  const { project } = await c.env.authorizer.requireProject(c.principal, connection.project_id, 'project:read');
  const bound = await offeredBindings(c);
  const lines = [
    `This server offers the tools bound to the agent "${connection.name}" of the project "${project.name}" in a Content Node Service: ` +
      'a versioned tree of folders, JSON documents, Markdown documents and files.',
  ];
  if (settings.description) lines.push(`The agent: ${settings.description}`);
  if (bound.length === 0) lines.push('No tools are bound to this agent yet.');
  else {
    lines.push('Each tool works beneath its own node, and the paths it takes are relative to that node:');
    for (const b of bound) lines.push(`- \`${b.name}\` (${b.tool.type}): ${b.nodePath ? `beneath "${b.nodePath}"` : 'the whole project'}`);
  }
  if (bound.some((b) => toolWrites(b.tool.type, b.tool.config))) {
    lines.push(`Every change is recorded as a new version attributed to the agent ("${connection.name}"); pass a short \`message\` saying why.`);
  }
  return lines.join('\n');
}

/**
 * The MCP server of one session on an agent: exactly its bound tools (no resources), listed and
 * run from the request's context, so a binding added, changed or removed shows at the next request.
 */
export async function agentServer(first: AgentCallContext, options: ServerOptions): Promise<Server> {
  return toolServer({ toolsOf: agentToolsOf, findTool: findAgentTool }, { ...options, instructions: await agentInstructionsFor(first), resources: false });
}
