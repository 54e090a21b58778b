import type { Agent, AgentAccess, AgentBashTool, Located } from '../../agents/config/agentRecord.ts';
import type { ExecutionView } from '../../agents/executions/executionViews.ts';

export const presentAccess = (a: Located<AgentAccess>) => ({
  id: a.id,
  agent_id: a.agent_id,
  node_id: a.node_id,
  path: a.path,
  mode: a.mode,
  tools: a.tools,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

export const presentBashTool = (b: Located<AgentBashTool>) => ({
  id: b.id,
  agent_id: b.agent_id,
  node_id: b.node_id,
  path: b.path,
  name: b.name,
  mode: b.mode,
  limits: b.limits,
  created_at: b.created_at,
  updated_at: b.updated_at,
});

/** An agent with what it may reach; never its key hash (`key_prefix` tells keys apart). */
export function presentAgent(agent: Agent, accesses: Located<AgentAccess>[], bashTools: Located<AgentBashTool>[]) {
  const c = agent.connection;
  const s = agent.settings;
  return {
    id: c.id,
    project_id: c.project_id,
    name: c.name,
    description: s.description,
    system_prompt: s.system_prompt,
    model: s.model,
    temperature: s.temperature,
    max_tool_rounds: s.max_tool_rounds,
    max_tool_calls_per_round: s.max_tool_calls_per_round,
    status: c.status,
    is_default: agent.isDefault,
    key_prefix: c.key_prefix,
    created_by: c.created_by,
    created_at: c.created_at,
    updated_at: c.updated_at,
    last_used_at: c.last_used_at,
    accesses: accesses.map(presentAccess),
    bash_tools: bashTools.map(presentBashTool),
  };
}

/** An execution as its viewer may see it (executionView: the details, or the summary). */
export const presentExecution = (e: ExecutionView) => ({
  id: e.id,
  agent_id: e.agent_id,
  session_id: e.session_id,
  status: e.status,
  started_at: e.started_at,
  finished_at: e.finished_at,
  model: e.model,
  input_tokens: e.input_tokens,
  output_tokens: e.output_tokens,
  tool_calls: e.tool_calls,
  versions_written: e.versions_written,
  error: e.error,
  details: e.details,
});
