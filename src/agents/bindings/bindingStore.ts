import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A tool of the agent's project bound to the agent; a NULL name or description is the tool's own. */
export interface ToolBinding {
  id: string;
  agent_id: string;
  tool_id: string;
  name: string | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** The `agent_tool_bindings` table. Authorization and validation are the caller's (AgentToolBindings). */
export class BindingStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  /** In the order they were bound. */
  list(agentId: string): ToolBinding[] {
    return this.sql('SELECT * FROM agent_tool_bindings WHERE agent_id = ? ORDER BY created_at, id').all(agentId) as ToolBinding[];
  }

  byId(id: string): ToolBinding | null {
    return (this.sql('SELECT * FROM agent_tool_bindings WHERE id = ?').get(id) as ToolBinding | undefined) ?? null;
  }

  find(agentId: string, toolId: string): ToolBinding | null {
    return (this.sql('SELECT * FROM agent_tool_bindings WHERE agent_id = ? AND tool_id = ?').get(agentId, toolId) as ToolBinding | undefined) ?? null;
  }

  insert(agentId: string, toolId: string, fields: Pick<ToolBinding, 'name' | 'description'>): ToolBinding {
    const now = nowIso();
    const binding: ToolBinding = { id: newId('atb'), agent_id: agentId, tool_id: toolId, ...fields, created_at: now, updated_at: now };
    this.sql('INSERT INTO agent_tool_bindings (id, agent_id, tool_id, name, description, created_at, updated_at) VALUES (@id, @agent_id, @tool_id, @name, @description, @created_at, @updated_at)').run(binding);
    return binding;
  }

  update(binding: ToolBinding, fields: Pick<ToolBinding, 'name' | 'description'>): ToolBinding {
    const next: ToolBinding = { ...binding, ...fields, updated_at: nowIso() };
    this.sql('UPDATE agent_tool_bindings SET name = @name, description = @description, updated_at = @updated_at WHERE id = @id').run(next);
    return next;
  }

  delete(id: string): void {
    this.sql('DELETE FROM agent_tool_bindings WHERE id = ?').run(id);
  }

  count(agentId: string): number {
    return (this.sql('SELECT COUNT(*) AS n FROM agent_tool_bindings WHERE agent_id = ?').get(agentId) as { n: number }).n;
  }
}
