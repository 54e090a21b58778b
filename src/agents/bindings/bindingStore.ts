import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { isUniqueViolation } from '../../db/metadata/uniqueViolation.ts';
import { defined } from '../../domain/defined.ts';
import { DomainError } from '../../errors/domainError.ts';
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

/** A unique index refusing a binding: the tool bound twice, or an explicit name the agent has already. */
function refusal(err: unknown, toolId: string, name: string | null): DomainError | null {
  if (isUniqueViolation(err, 'tool_id')) return new DomainError('CONFLICT', 'This tool is already bound to the agent (change the binding with PUT).', { tool_id: toolId });
  if (isUniqueViolation(err, 'name')) return new DomainError('CONFLICT', `The agent already offers a tool named "${name}": give this binding another name.`, { name });
  return null;
}

/**
 * The `agent_tool_bindings` table, on the metadata store. Authorization and validation are the
 * caller's (AgentToolBindings); the unique indexes refuse what a race let through (409).
 */
export class BindingStore {
  constructor(private readonly metadata: MetadataStore) {}

  /** In the order they were bound. */
  async list(agentId: string): Promise<ToolBinding[]> {
    return await this.metadata.db.selectFrom('agent_tool_bindings').selectAll().where('agent_id', '=', agentId).orderBy('created_at').orderBy('id').execute();
  }

  async byId(id: string): Promise<ToolBinding | null> {
    return (await this.metadata.db.selectFrom('agent_tool_bindings').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  async find(agentId: string, toolId: string): Promise<ToolBinding | null> {
    return (await this.metadata.db.selectFrom('agent_tool_bindings').selectAll().where('agent_id', '=', agentId).where('tool_id', '=', toolId).executeTakeFirst()) ?? null;
  }

  async insert(agentId: string, toolId: string, fields: Pick<ToolBinding, 'name' | 'description'>): Promise<ToolBinding> {
    const now = nowIso();
    const binding: ToolBinding = { id: newId('atb'), agent_id: agentId, tool_id: toolId, ...fields, created_at: now, updated_at: now };
    try {
      await this.metadata.db.insertInto('agent_tool_bindings').values(binding).execute();
    } catch (err) {
      throw refusal(err, toolId, fields.name) ?? err;
    }
    return binding;
  }

  /** The binding with the fields given (the others as stored: a change of them made meanwhile stays); null when it was deleted meanwhile. */
  async update(binding: ToolBinding, fields: Partial<Pick<ToolBinding, 'name' | 'description'>>): Promise<ToolBinding | null> {
    try {
      const r = await this.metadata.db
        .updateTable('agent_tool_bindings')
        .set({ ...defined(fields), updated_at: nowIso() })
        .where('id', '=', binding.id)
        .returningAll()
        .executeTakeFirst();
      return r ?? null;
    } catch (err) {
      throw refusal(err, binding.tool_id, fields.name ?? null) ?? err;
    }
  }

  async delete(id: string): Promise<void> {
    await this.metadata.db.deleteFrom('agent_tool_bindings').where('id', '=', id).execute();
  }

  async count(agentId: string): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('agent_tool_bindings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
