import type { Db } from '../../db/database.ts';
import { inTransaction } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import type { ConnectionMode } from '../../domain/connections/connectionRecord.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { AccessToolName, AgentAccess } from './agentRecord.ts';

/** An access as the store takes it: already validated by the caller. */
export interface AccessInput {
  node_id: string | null;
  mode: ConnectionMode;
  tools: AccessToolName[];
}

type Row = Omit<AgentAccess, 'tools'> & { tools: string };
const fromRow = (r: Row): AgentAccess => ({ ...r, tools: JSON.parse(r.tools) as AccessToolName[] });
const toRow = (a: AgentAccess): Row => ({ ...a, tools: JSON.stringify(a.tools) });

/** The `agent_accesses` table. Authorization and validation are the caller's (AgentAccesses). */
export class AccessStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
  }

  list(agentId: string): AgentAccess[] {
    return (this.sql('SELECT * FROM agent_accesses WHERE agent_id = ? ORDER BY created_at, id').all(agentId) as Row[]).map(fromRow);
  }

  find(id: string): AgentAccess | null {
    const r = this.sql('SELECT * FROM agent_accesses WHERE id = ?').get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  /** The agent's access to this node (null: its whole-project access), if it has one. */
  forNode(agentId: string, nodeId: string | null): AgentAccess | null {
    const r = this.sql(`SELECT * FROM agent_accesses WHERE agent_id = ? AND ifnull(node_id, '') = ifnull(?, '')`).get(agentId, nodeId) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  insert(agentId: string, input: AccessInput): AgentAccess {
    const now = nowIso();
    const access: AgentAccess = { id: newId('acc'), agent_id: agentId, ...input, created_at: now, updated_at: now };
    this.sql('INSERT INTO agent_accesses (id, agent_id, node_id, mode, tools, created_at, updated_at) VALUES (@id, @agent_id, @node_id, @mode, @tools, @created_at, @updated_at)').run(toRow(access));
    return access;
  }

  update(id: string, input: AccessInput): AgentAccess {
    const next: AgentAccess = { ...this.find(id)!, ...input, updated_at: nowIso() };
    this.sql('UPDATE agent_accesses SET node_id = @node_id, mode = @mode, tools = @tools, updated_at = @updated_at WHERE id = @id').run(toRow(next));
    return next;
  }

  delete(id: string): void {
    this.sql('DELETE FROM agent_accesses WHERE id = ?').run(id);
  }

  /**
   * Replaces the agent's accesses with `items` in one transaction. An access to a node that was
   * already there keeps its id and creation time (clients holding the id still find it).
   */
  replace(agentId: string, items: AccessInput[]): AgentAccess[] {
    return inTransaction(this.db, () => {
      const kept = new Map(this.list(agentId).map((a) => [a.node_id ?? '', a]));
      const result = items.map((item) => {
        const old = kept.get(item.node_id ?? '');
        kept.delete(item.node_id ?? '');
        return old ? this.update(old.id, item) : this.insert(agentId, item);
      });
      for (const gone of kept.values()) this.delete(gone.id);
      return result;
    });
  }
}
