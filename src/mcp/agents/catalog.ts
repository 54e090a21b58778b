import type { BoundTool } from '../../agents/bindings/toolBindings.ts';
import { actingThrough, boundToolReach, toolWrites } from '../../agents/tools/reach.ts';
import { DomainError } from '../../errors/domainError.ts';
import { typeInputSchema, type Lookup, type McpTool } from '../tools/mcpTool.ts';
import { mayWrite, type AgentCallContext } from './context.ts';

/** The message of a write through the agent's server when the caller gave none. */
function withMessage(c: AgentCallContext, b: BoundTool, args: Record<string, unknown>): Record<string, unknown> {
  if (b.tool.type !== 'write' || args.message !== undefined || typeof args.path !== 'string') return args;
  const path = [b.nodePath, args.path.replace(/^\/+/, '')].filter(Boolean).join('/');
  return { ...args, message: `write ${path} (agent "${c.agent.connection.name}" via MCP)` };
}

/**
 * A bound tool as the agent's server offers it: under the binding's name and description, with
 * the tool type's own input schema (paths relative to the tool's node), run by the tools library
 * as the agent acting through the binding (the tool's node, read_write when the tool writes), so
 * its writes are the agent's versions. Every call is recorded for the agent's status.
 */
function asMcpTool(b: BoundTool): McpTool<AgentCallContext> {
  const writes = toolWrites(b.tool.type, b.tool.config);
  return {
    name: b.name,
    title: b.tool.name,
    description: b.description,
    annotations: { readOnlyHint: !writes, openWorldHint: false },
    writes,
    inputSchema: () => typeInputSchema(b.tool.type),
    async run(c, args) {
      const started = performance.now();
      let ok = false;
      try {
        if (b.nodePath === null) throw new DomainError('NOT_FOUND', `The node of the tool "${b.name}" no longer exists (it was deleted or is in the trash).`);
        const principal = actingThrough(c.agent.connection, boundToolReach(b.binding, b.tool, b.nodePath));
        const result = (await c.env.tools.call(principal, b.tool, withMessage(c, b, args))) as Record<string, unknown>;
        ok = true;
        return result;
      } finally {
        await c.env.bindings.recordCall(c.agent.connection.id, b.name, ok, performance.now() - started, 'mcp');
      }
    },
  };
}

/** Exactly the agent's bound tools that can run (their node exists), less the writing ones for a caller who may not write. */
export async function offeredBindings(c: AgentCallContext): Promise<BoundTool[]> {
  const write = await mayWrite(c);
  return (await c.env.bindings.boundTools(c.agent.connection.id)).filter((b) => b.nodePath !== null && (write || !toolWrites(b.tool.type, b.tool.config)));
}

export const agentToolsOf = async (c: AgentCallContext): Promise<McpTool<AgentCallContext>[]> => (await offeredBindings(c)).map(asMcpTool);

/** The bound tool a call names; a writing one is refused to a caller who may not write (a tool whose node is gone answers a tool error). */
export async function findAgentTool(c: AgentCallContext, name: string): Promise<Lookup<AgentCallContext>> {
  const bound = (await c.env.bindings.boundTools(c.agent.connection.id)).find((b) => b.name === name);
  if (!bound) return null;
  const tool = asMcpTool(bound);
  if (tool.writes && !(await mayWrite(c))) return { refused: `Your role on this project does not allow changes: "${name}" is not available to you.` };
  return { tool };
}
