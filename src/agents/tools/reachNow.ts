import type { Principal } from '../../auth/principal.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { ToolStore } from '../../tools/toolStore.ts';
import { BindingStore } from '../bindings/bindingStore.ts';
import { AccessStore } from '../config/accessStore.ts';
import { BashToolStore } from '../config/bashToolStore.ts';
import { currentPath } from '../config/reachNode.ts';
import { actingThrough, toolWrites } from './reach.ts';

type Reach = { path: string; mode: 'read' | 'read_write' };

/**
 * Where each kind of reach an agent acts through stands now, by its id: an access or a bash tool
 * (its node where it is now, its mode), a tool binding (the tool's node, writable when the tool
 * writes). Null once it is gone (deleted, or its node left the project).
 */
export function reachesNow(d: { metadata: MetadataStore; content: Pick<ContentStore, 'findById'> }): (agent: { id: string; project_id: string }, reachId: string) => Promise<Reach | null> {
  const accesses = new AccessStore(d.metadata);
  const bash = new BashToolStore(d.metadata);
  const bindings = new BindingStore(d.metadata);
  const tools = new ToolStore(d.metadata);
  const at = (agent: { project_id: string }, nodeId: string | null) => currentPath(d, agent.project_id, nodeId);
  return async (agent, reachId) => {
    const own = <T extends { agent_id: string }>(r: T | null) => (r && r.agent_id === agent.id ? r : null);
    const a = own(await accesses.find(reachId)) ?? own(await bash.find(reachId));
    if (a) {
      const path = at(agent, a.node_id);
      return path === null ? null : { path, mode: a.mode };
    }
    const b = own(await bindings.byId(reachId));
    const tool = b ? await tools.find(b.tool_id) : null;
    if (!tool || tool.project_id !== agent.project_id) return null;
    const path = at(agent, tool.node_id);
    return path === null ? null : { path, mode: toolWrites(tool.type, tool.config) ? 'read_write' : 'read' };
  };
}

/**
 * For a background write of an agent acting through one of its reaches (a shell command's
 * write-back): the principal as it stands at write time, its key now narrowed to that reach as
 * it stands now (never wider than the run started with: a read-only start stays read-only); null
 * when the reach is gone. Undefined for any other principal, which acts as itself.
 *
 * The reach is read from the metadata store first (asynchronously), then applied synchronously
 * by the write-time grant: the write-back asks both in the project's serialized section, before
 * its commit (the sandbox's `authorize`, inside ContentStore.commitPlanned's plan), so no other
 * write of the project comes between the reading and the commit.
 */
export function narrowAtWrite(reaches: ReturnType<typeof reachesNow>) {
  return async (acting: Principal): Promise<((current: Principal) => Principal | null) | undefined> => {
    if (acting.kind !== 'key' || !acting.agentAccess) return undefined;
    const through = acting.agentAccess.id;
    const startedReadOnly = acting.connection.mode === 'read';
    const now = await reaches(acting.connection, through);
    return (current) => {
      if (current.kind !== 'key' || current.id !== acting.id) return null;
      if (!now) return null;
      return actingThrough(current.connection, { id: through, path: now.path, mode: startedReadOnly ? 'read' : now.mode });
    };
  };
}
