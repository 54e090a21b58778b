import type { ContentStore } from '../content/contentStore.ts';
import type { Db } from '../db/database.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { SandboxExecutor } from '../sandbox/executor.ts';
import type { SearchIndexer } from '../search/indexer.ts';
import type { Tools } from '../tools/tools.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import { AgentAccesses } from './config/accesses.ts';
import { AccessStore } from './config/accessStore.ts';
import { Agents } from './config/agents.ts';
import { AgentBashTools } from './config/bashTools.ts';
import { BashToolStore } from './config/bashToolStore.ts';
import { ExecutionStore } from './executions/executionStore.ts';
import { AgentToolBindings } from './bindings/toolBindings.ts';
import { AgentChat } from './chat/agentChat.ts';
import { AgentWorkspaces } from './workspaces/agentWorkspaces.ts';
import { parseModelRef } from '../llm/modelRef.ts';
import { ChatProviders, type LlmSettings } from '../llm/providers.ts';
import { ChatSessions } from './sessions/chatSessions.ts';
import { MessageStore } from './sessions/messageStore.ts';
import { SessionStore } from './sessions/sessionStore.ts';

export interface AgentsService {
  /** Agent records (connections of kind `agent`) and who may read or change them. */
  agents: Agents;
  accesses: AgentAccesses;
  bashTools: AgentBashTools;
  /** Chat sessions with their visibility rules; the stores below are unchecked, for the chat loop. */
  sessions: ChatSessions;
  sessionStore: SessionStore;
  messages: MessageStore;
  executions: ExecutionStore;
  /** The language-model providers, by `provider:model`. */
  providers: ChatProviders;
  /** Streamed chat turns (POST /agents). */
  chat: AgentChat;
  /** Agents' drafts (spec 4.10 workspaces): their writes go there while one is open. */
  workspaces: AgentWorkspaces;
  /** Tools bound to agents: served on each agent's MCP server (src/mcp/agents/) and offered in its chat. */
  bindings: AgentToolBindings;
  /** Before serving: executions a previous run left `running` become failed (when `recover`). */
  start(): Promise<void>;
}

/**
 * Agents (spec 4.8): configuration, accesses, bash tools, chat sessions, messages and
 * executions, their records on the metadata store (the agents themselves are connections, on
 * `db`). Started before serving, when executions a previous run left `running` become failed
 * (`interrupted`): no turn survives its process.
 */
export function createAgents(d: {
  db: Db;
  metadata: MetadataStore;
  logger: Logger;
  connections: AccessConnectionStore;
  content: ContentStore;
  access: ContentAccess;
  authorizer: Authorizer;
  tools: Tools;
  indexer: SearchIndexer;
  sandbox: SandboxExecutor;
  llm: LlmSettings;
  /**
   * Whether start-up marks executions left running as failed: only when no other process can be
   * running turns (several workers: the box's first). Default true.
   */
  recover?: boolean;
  /**
   * The cluster node this process is (issue 31): recorded on the turns it starts, and start-up
   * fails only those left running (and turns from before the cluster). Null: a single box, whose
   * start-up fails every running turn.
   */
  nodeId: string | null;
}): AgentsService {
  const ref = parseModelRef(d.llm.defaultModel);
  if (typeof ref === 'string') throw new Error(`CNS_DEFAULT_MODEL: ${ref}`);
  const defaultModel = d.llm.defaultModel;
  const accessStore = new AccessStore(d.metadata);
  const agents = new Agents({ metadata: d.metadata, connections: d.connections, accesses: accessStore, authorizer: d.authorizer, defaultModel });
  const reach = { content: d.content, access: d.access, agents };
  const sessionStore = new SessionStore(d.metadata);
  const messages = new MessageStore(d.metadata);
  const executions = new ExecutionStore(d.metadata, d.nodeId);
  const accesses = new AgentAccesses({ ...reach, store: accessStore });
  const bashTools = new AgentBashTools({ ...reach, store: new BashToolStore(d.metadata) });
  const sessions = new ChatSessions({ agents, store: sessionStore, messages, authorizer: d.authorizer });
  const providers = new ChatProviders(d.llm);
  const bindings = new AgentToolBindings({ metadata: d.metadata, agents, tools: d.tools, content: d.content, access: d.access });
  const workspaces = new AgentWorkspaces({ metadata: d.metadata, content: d.content, access: d.access, authorizer: d.authorizer, sandbox: d.sandbox });
  const chat = new AgentChat({
    accesses,
    bashTools,
    sessions,
    sessionStore,
    messages,
    executions,
    providers,
    authorizer: d.authorizer,
    workspaces,
    bindings,
    toolset: { logger: d.logger, tools: d.tools, content: d.content, indexer: d.indexer },
    logger: d.logger,
  });
  const start = async () => {
    if (d.recover !== false) await executions.failInterrupted();
  };
  return { agents, accesses, bashTools, sessions, sessionStore, messages, executions, providers, chat, workspaces, bindings, start };
}
