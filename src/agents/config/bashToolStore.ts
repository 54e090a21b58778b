import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { lockKey } from '../../db/metadata/keyLock.ts';
import type { AgentBashToolsTable } from '../../db/metadata/tables/agents.ts';
import type { ConnectionMode } from '../../domain/connections/connectionRecord.ts';
import { defined } from '../../domain/defined.ts';
import { DomainError } from '../../errors/domainError.ts';
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

const fromRow = (r: AgentBashToolsTable): AgentBashTool => ({ ...r, limits: JSON.parse(r.limits) as EndpointLimits });
const toRow = (b: AgentBashTool): AgentBashToolsTable => ({ ...b, limits: JSON.stringify(b.limits) });

/** A name is the agent's once: a second tool of that name is refused, naming the first. */
const taken = (existing: AgentBashTool) => new DomainError('CONFLICT', `The agent already has a bash tool named "${existing.name}".`, { bash_id: existing.id, name: existing.name });

/**
 * The `agent_bash_tools` table, on the metadata store. Authorization and validation are the
 * caller's (AgentBashTools). The writes of one agent's bash tools take turns (lockKey): the check
 * that a name is free and the write that takes it are one transaction.
 */
export class BashToolStore {
  constructor(private readonly metadata: MetadataStore) {}

  async list(agentId: string, db: MetadataDb = this.metadata.db): Promise<AgentBashTool[]> {
    const rows = await db.selectFrom('agent_bash_tools').selectAll().where('agent_id', '=', agentId).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async find(id: string): Promise<AgentBashTool | null> {
    const r = await this.metadata.db.selectFrom('agent_bash_tools').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  async byName(agentId: string, name: string, db: MetadataDb = this.metadata.db): Promise<AgentBashTool | null> {
    const r = await db.selectFrom('agent_bash_tools').selectAll().where('agent_id', '=', agentId).where('name', '=', name).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /** Adds a bash tool; CONFLICT when the agent has one of that name already. */
  async insert(agentId: string, input: BashToolInput): Promise<AgentBashTool> {
    return this.metadata.transaction(async (trx) => {
      await lockKey(this.metadata.engine, trx, `agent-bash:${agentId}`);
      const existing = await this.byName(agentId, input.name, trx);
      if (existing) throw taken(existing);
      return this.insertIn(trx, agentId, input);
    });
  }

  /**
   * Changes the fields `input` gives (the others as stored: a change of them made meanwhile stays);
   * CONFLICT when another of the agent's has the name, null when it was deleted meanwhile.
   */
  async update(current: AgentBashTool, input: Partial<BashToolInput>): Promise<AgentBashTool | null> {
    return this.metadata.transaction(async (trx) => {
      await lockKey(this.metadata.engine, trx, `agent-bash:${current.agent_id}`);
      const existing = input.name === undefined ? null : await this.byName(current.agent_id, input.name, trx);
      if (existing && existing.id !== current.id) throw taken(existing);
      return this.updateIn(trx, current.id, input);
    });
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('agent_bash_tools').where('id', '=', id).execute();
  }

  /** Replaces the agent's bash tools in one transaction; a tool whose name was already there keeps its id. */
  async replace(agentId: string, items: BashToolInput[]): Promise<AgentBashTool[]> {
    return this.metadata.transaction(async (trx) => {
      await lockKey(this.metadata.engine, trx, `agent-bash:${agentId}`);
      const kept = new Map((await this.list(agentId, trx)).map((b) => [b.name, b]));
      // Names move between items freely: the old rows leave first so UNIQUE(agent_id, name) holds at each step.
      const reuse = items.map((item) => kept.get(item.name) ?? null);
      for (const old of kept.values()) if (!reuse.includes(old)) await trx.deleteFrom('agent_bash_tools').where('id', '=', old.id).execute();
      const result: AgentBashTool[] = [];
      for (const [i, item] of items.entries()) {
        const old = reuse[i];
        result.push(old ? (await this.updateIn(trx, old.id, item))! : await this.insertIn(trx, agentId, item));
      }
      return result;
    });
  }

  private async insertIn(db: MetadataDb, agentId: string, input: BashToolInput): Promise<AgentBashTool> {
    const now = nowIso();
    const tool: AgentBashTool = { id: newId('bash'), agent_id: agentId, ...input, created_at: now, updated_at: now };
    await db.insertInto('agent_bash_tools').values(toRow(tool)).execute();
    return tool;
  }

  private async updateIn(db: MetadataDb, id: string, input: Partial<BashToolInput>): Promise<AgentBashTool | null> {
    const { limits, ...rest } = defined(input);
    const r = await db
      .updateTable('agent_bash_tools')
      .set({ ...rest, ...(limits === undefined ? {} : { limits: JSON.stringify(limits) }), updated_at: nowIso() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return r ? fromRow(r) : null;
  }
}
