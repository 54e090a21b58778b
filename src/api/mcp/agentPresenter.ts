import type { z } from 'zod';
import type { Agent } from '../../agents/config/agentRecord.ts';
import type { BoundTool } from '../../agents/bindings/toolBindings.ts';
import { toolWrites } from '../../agents/tools/reach.ts';
import type { bindingSchema, regeneratedKeySchema } from './agentSchemas.ts';
import { remoteServerConfig } from './presenter.ts';

export const agentServerUrl = (baseUrl: string, agentId: string) => `${baseUrl}/api/v1/mcp/a/${encodeURIComponent(agentId)}`;

export function presentBinding(b: BoundTool): z.output<typeof bindingSchema> {
  const { binding, tool } = b;
  return {
    id: binding.id,
    agent_id: binding.agent_id,
    tool_id: tool.id,
    name: b.name,
    description: b.description,
    custom: { name: binding.name, description: binding.description },
    tool: { id: tool.id, name: tool.name, type: tool.type, node_id: tool.node_id, path: b.nodePath },
    writes: toolWrites(tool.type, tool.config),
    created_at: binding.created_at,
    updated_at: binding.updated_at,
  };
}

/** The answer to a key regeneration: the new key once, with a client configuration holding it. */
export function presentNewKey(agent: Agent, key: string, baseUrl: string): z.output<typeof regeneratedKeySchema> {
  const c = agent.connection;
  const url = agentServerUrl(baseUrl, c.id);
  return {
    agent: { id: c.id, name: c.name, project_id: c.project_id, status: c.status, key_prefix: c.key_prefix },
    key,
    server_url: url,
    client_config: remoteServerConfig(c.name, url, key),
  };
}
