import type { Db } from '../../db/database.ts';
import { inTransaction } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import type { ConnectionMode } from '../../domain/connections/connectionRecord.ts';
import type { EndpointLimits } from '../../sandbox/limits.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { AgentBashTool } from './agentRecord.ts';

/** A bash tool as the store takes it: already validated by the caller. */
export interface BashToolInput {
  node_id: string | null;
  name: string;
  mode: ConnectionMode;
  limits: EndpointLimits;
}

type Row = Omit<AgentBashTool, 'limits'> & { limits: string };
const fromRow = (r: Row): AgentBashTool => ({ ...r, limits: JSON.parse(r.limits) as EndpointLimits });
const toRow = (b: AgentBashTool): Row => ({ ...b, limits: JSON.stringify(b.limits) });

/** The `agent_bash_tools` table. Authorization and validation are the caller's (AgentBashTools). */
export class BashToolStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
  }

  list(agentId: string): AgentBashTool[] {
    return (this.sql('SELECT * FROM agent_bash_tools WHERE agent_id = ? ORDER BY created_at, id').all(agentId) as Row[]).map(fromRow);
  }

  find(id: string): AgentBashTool | null {
    const r = this.sql('SELECT * FROM agent_bash_tools WHERE id = ?').get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  byName(agentId: string, name: string): AgentBashTool | null {
    const r = this.sql('SELECT * FROM agent_bash_tools WHERE agent_id = ? AND name = ?').get(agentId, name) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  insert(agentId: string, input: BashToolInput): AgentBashTool {
    const now = nowIso();
    const tool: AgentBashTool = { id: newId('bash'), agent_id: agentId, ...input, created_at: now, updated_at: now };
    this.sql('INSERT INTO agent_bash_tools (id, agent_id, node_id, name, mode, limits, created_at, updated_at) VALUES (@id, @agent_id, @node_id, @name, @mode, @limits, @created_at, @updated_at)').run(toRow(tool));
    return tool;
  }

  update(id: string, input: BashToolInput): AgentBashTool {
    const next: AgentBashTool = { ...this.find(id)!, ...input, updated_at: nowIso() };
    this.sql('UPDATE agent_bash_tools SET node_id = @node_id, name = @name, mode = @mode, limits = @limits, updated_at = @updated_at WHERE id = @id').run(toRow(next));
    return next;
  }

  delete(id: string): void {
    this.sql('DELETE FROM agent_bash_tools WHERE id = ?').run(id);
  }

  /** Replaces the agent's bash tools in one transaction; a tool whose name was already there keeps its id. */
  replace(agentId: string, items: BashToolInput[]): AgentBashTool[] {
    return inTransaction(this.db, () => {
      const kept = new Map(this.list(agentId).map((b) => [b.name, b]));
      // Names move between items freely: the old rows leave first so UNIQUE(agent_id, name) holds at each step.
      const reuse = items.map((item) => kept.get(item.name) ?? null);
      for (const old of kept.values()) if (!reuse.includes(old)) this.delete(old.id);
      return items.map((item, i) => (reuse[i] ? this.update(reuse[i].id, item) : this.insert(agentId, item)));
    });
  }
}
