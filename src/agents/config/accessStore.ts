import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { lockKey } from '../../db/metadata/keyLock.ts';
import type { AgentAccessesTable } from '../../db/metadata/tables/agents.ts';
import type { ConnectionMode } from '../../domain/connections/connectionRecord.ts';
import { defined } from '../../domain/defined.ts';
import { DomainError } from '../../errors/domainError.ts';
import { newId, nowIso } from '../../util/ids.ts';
import type { AccessToolName, AgentAccess } from './agentRecord.ts';

/** An access as the store takes it: already validated by the caller. */
export interface AccessInput {
  node_id: string | null;
  mode: ConnectionMode;
  tools: AccessToolName[];
}

/** A change of an access: the fields given, and the mode and tools worked out from the access as stored (may throw to refuse). */
export interface AccessUpdate extends Partial<AccessInput> {
  modeAndTools?: (stored: AgentAccess) => Pick<AccessInput, 'mode' | 'tools'>;
}

const fromRow = (r: AgentAccessesTable): AgentAccess => ({ ...r, tools: JSON.parse(r.tools) as AccessToolName[] });
const toRow = (a: AgentAccess): AgentAccessesTable => ({ ...a, tools: JSON.stringify(a.tools) });

/** One access per node and agent: a second one is refused, naming the first. */
const taken = (nodeId: string | null, existing: AgentAccess) =>
  new DomainError('CONFLICT', `The agent already has an access to ${nodeId === null ? 'the whole project' : 'this node'}; change that one instead.`, { access_id: existing.id });

/**
 * The `agent_accesses` table, on the metadata store. Authorization and validation are the
 * caller's (AgentAccesses). The writes of one agent's accesses take turns (lockKey): the check
 * that a node is free and the write that takes it are one transaction.
 */
export class AccessStore {
  constructor(private readonly metadata: MetadataStore) {}

  async list(agentId: string, db: MetadataDb = this.metadata.db): Promise<AgentAccess[]> {
    const rows = await db.selectFrom('agent_accesses').selectAll().where('agent_id', '=', agentId).orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async find(id: string): Promise<AgentAccess | null> {
    const r = await this.metadata.db.selectFrom('agent_accesses').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /** The agent's access to this node (null: its whole-project access), if it has one. */
  async forNode(agentId: string, nodeId: string | null, db: MetadataDb = this.metadata.db): Promise<AgentAccess | null> {
    const q = db.selectFrom('agent_accesses').selectAll().where('agent_id', '=', agentId);
    const r = await (nodeId === null ? q.where('node_id', 'is', null) : q.where('node_id', '=', nodeId)).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /** Adds an access; CONFLICT when the agent has one to the node already. */
  async insert(agentId: string, input: AccessInput): Promise<AgentAccess> {
    return this.metadata.transaction(async (trx) => {
      await lockKey(this.metadata.engine, trx, `agent-accesses:${agentId}`);
      const existing = await this.forNode(agentId, input.node_id, trx);
      if (existing) throw taken(input.node_id, existing);
      return this.insertIn(trx, agentId, input);
    });
  }

  /**
   * Changes an access: the fields `input` gives, the others as stored (a change of them made
   * meanwhile stays). `modeAndTools` computes those two from the access as stored under the lock.
   * CONFLICT when another access of the agent has the node, null when it was deleted meanwhile.
   */
  async update(current: AgentAccess, input: AccessUpdate): Promise<AgentAccess | null> {
    return this.metadata.transaction(async (trx) => {
      await lockKey(this.metadata.engine, trx, `agent-accesses:${current.agent_id}`);
      const { modeAndTools, ...fields } = input;
      if (fields.node_id !== undefined) {
        const existing = await this.forNode(current.agent_id, fields.node_id, trx);
        if (existing && existing.id !== current.id) throw taken(fields.node_id, existing);
      }
      if (modeAndTools) {
        const stored = await trx.selectFrom('agent_accesses').selectAll().where('id', '=', current.id).executeTakeFirst();
        if (!stored) return null;
        Object.assign(fields, modeAndTools(fromRow(stored)));
      }
      return this.updateIn(trx, current.id, fields);
    });
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('agent_accesses').where('id', '=', id).execute();
  }

  /**
   * Replaces the agent's accesses with `items` in one transaction. An access to a node that was
   * already there keeps its id and creation time (clients holding the id still find it).
   */
  async replace(agentId: string, items: AccessInput[]): Promise<AgentAccess[]> {
    return this.metadata.transaction(async (trx) => {
      await lockKey(this.metadata.engine, trx, `agent-accesses:${agentId}`);
      const kept = new Map((await this.list(agentId, trx)).map((a) => [a.node_id ?? '', a]));
      const reuse = items.map((item) => {
        const old = kept.get(item.node_id ?? '');
        kept.delete(item.node_id ?? '');
        return old ?? null;
      });
      for (const gone of kept.values()) await trx.deleteFrom('agent_accesses').where('id', '=', gone.id).execute();
      const result: AgentAccess[] = [];
      for (const [i, item] of items.entries()) {
        const old = reuse[i];
        result.push(old ? (await this.updateIn(trx, old.id, item))! : await this.insertIn(trx, agentId, item));
      }
      return result;
    });
  }

  /** Adds an access within the caller's transaction, without the check of `insert` (the default agent's first access). */
  async insertIn(db: MetadataDb, agentId: string, input: AccessInput): Promise<AgentAccess> {
    const now = nowIso();
    const access: AgentAccess = { id: newId('acc'), agent_id: agentId, ...input, created_at: now, updated_at: now };
    await db.insertInto('agent_accesses').values(toRow(access)).execute();
    return access;
  }

  private async updateIn(db: MetadataDb, id: string, input: Partial<AccessInput>): Promise<AgentAccess | null> {
    const { tools, ...rest } = defined(input);
    const r = await db
      .updateTable('agent_accesses')
      .set({ ...rest, ...(tools === undefined ? {} : { tools: JSON.stringify(tools) }), updated_at: nowIso() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return r ? fromRow(r) : null;
  }
}
