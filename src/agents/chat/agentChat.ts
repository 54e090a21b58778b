import type { Principal } from '../../auth/principal.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { Logger } from '../../logging/logger.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { nowIso } from '../../util/ids.ts';
import type { Agent } from '../config/agentRecord.ts';
import type { AgentAccesses } from '../config/accesses.ts';
import type { AgentBashTools } from '../config/bashTools.ts';
import type { ExecutionStore } from '../executions/executionStore.ts';
import type { ChatMessage } from '../../llm/provider.ts';
import { InvalidModelRef, ProviderNotConfigured, type ChatProviders } from '../../llm/providers.ts';
import type { ChatSessions } from '../sessions/chatSessions.ts';
import type { MessageStore } from '../sessions/messageStore.ts';
import type { SessionStore } from '../sessions/sessionStore.ts';
import type { AgentToolBindings } from '../bindings/toolBindings.ts';
import { agentToolset, type AgentToolset, type BashReach, type BoundReach, type DraftView, type ToolsetEnv } from '../tools/agentToolset.ts';
import type { AccessReach } from '../tools/reach.ts';
import { runTurn, type ChatEvent, type TurnOutcome } from './chatTurn.ts';

export interface AgentChatDeps {
  accesses: Pick<AgentAccesses, 'located'>;
  bashTools: Pick<AgentBashTools, 'located'>;
  sessions: Pick<ChatSessions, 'create' | 'visible'>;
  sessionStore: Pick<SessionStore, 'touch'>;
  messages: Pick<MessageStore, 'append' | 'history'>;
  executions: Pick<ExecutionStore, 'start' | 'finish'>;
  providers: ChatProviders;
  /** Tools bound to the agent, and the log of its tool calls (its MCP status counts them). */
  bindings: Pick<AgentToolBindings, 'boundTools' | 'recordCall'>;
  /** The agent's open workspace, if any: its tool calls then act on the draft. */
  workspaces: { find(agentId: string): Promise<DraftView | null> };
  authorizer: Authorizer;
  toolset: ToolsetEnv;
  logger: Logger;
}

/** The end of a turn as the client sees it (section 6: `done`). */
export interface DoneEvent {
  type: 'done';
  session_id: string;
  execution_id: string;
  status: TurnOutcome['status'];
  usage: TurnOutcome['usage'];
}

/** A turn that passed every check; `run` streams it. */
export interface PreparedTurn {
  sessionId: string;
  run(emit: (event: ChatEvent | DoneEvent) => void, signal: AbortSignal): Promise<TurnOutcome>;
}

/**
 * `POST /agents`: a member who may read the project (or the agent's own key) sends a message to
 * an agent; the surface has checked the agent's project first, `begin` makes the finer part (a
 * key chats only as its own agent). Everything that can be refused is refused in `begin`, before
 * the stream starts (an error in the envelope); once streaming, failures are `error` events and
 * the stream always ends with `done`. One turn at a time per session: turns of one conversation
 * cannot interleave.
 */
export class AgentChat {
  private readonly busySessions = new Set<string>();

  constructor(private readonly d: AgentChatDeps) {}

  async begin(principal: Principal, agent: Agent, input: { message: string; sessionId?: string }): Promise<PreparedTurn> {
    const { connection, settings } = agent;
    if (connection.status !== 'active') throw new DomainError('FORBIDDEN', `This agent is ${connection.status}.`, { status: connection.status });
    const { provider, model } = this.resolveModel(settings.model);
    let sessionId = input.sessionId;
    if (sessionId !== undefined) {
      const session = await this.d.sessions.visible(principal, sessionId);
      if (session.agent_id !== connection.id) throw invalidField('session_id', 'this chat session belongs to another agent');
      if (this.busySessions.has(sessionId)) throw new DomainError('CONFLICT', 'A turn is already running in this chat session; wait for its `done` event.');
    }
    sessionId ??= (await this.d.sessions.create(principal, agent, titleFrom(input.message))).id;
    const session = sessionId;
    // Taken from here, across the reads below: a second turn of the session is refused meanwhile.
    this.busySessions.add(session);

    let toolset: AgentToolset;
    let history: ChatMessage[];
    let executionId: string;
    try {
      const [located, bashTools, boundTools, workspace] = await Promise.all([
        this.d.accesses.located(connection.id),
        this.d.bashTools.located(connection.id),
        this.d.bindings.boundTools(connection.id),
        this.d.workspaces.find(connection.id),
      ]);
      const accesses: AccessReach[] = located.flatMap((a) => (a.path === null ? [] : [{ id: a.id, nodeId: a.node_id, path: a.path, mode: a.mode, tools: a.tools }]));
      const bash: BashReach[] = bashTools.flatMap((b) => (b.path === null ? [] : [{ id: b.id, name: b.name, nodeId: b.node_id, path: b.path, mode: b.mode, limits: b.limits }]));
      const bound: BoundReach[] = boundTools.flatMap((b) => (b.nodePath === null ? [] : [{ bindingId: b.binding.id, name: b.name, description: b.description, tool: b.tool, nodePath: b.nodePath }]));
      toolset = logged(agentToolset(this.d.toolset, connection, accesses, bash, await this.mayWrite(principal, connection.project_id), workspace, bound), (name, ok, ms) =>
        this.d.bindings.recordCall(connection.id, name, ok, ms, 'chat'),
      );
      history = await this.d.messages.history(session);
      executionId = await this.d.executions.start({ agentId: connection.id, sessionId: session, model: settings.model });
    } catch (e) {
      this.busySessions.delete(session);
      throw e;
    }

    return {
      sessionId: session,
      run: async (emit, signal) => {
        let outcome: TurnOutcome;
        try {
          outcome = await runTurn(
            {
              provider,
              model,
              system: settings.system_prompt,
              temperature: settings.temperature ?? undefined,
              maxToolRounds: settings.max_tool_rounds,
              maxToolCallsPerRound: settings.max_tool_calls_per_round,
              history,
              message: input.message,
              toolset,
              signal,
              record: async (m) => {
                await this.d.messages.append(session, [m], executionId);
              },
            },
            emit,
          );
        } catch (err) {
          this.d.logger.error({ err, agent: connection.id, execution: executionId }, 'agent turn failed');
          const error = { code: 'internal_error', message: 'The turn failed on the server; the error was logged.' };
          emit({ type: 'error', ...error });
          outcome = { status: 'failed', usage: { input_tokens: 0, output_tokens: 0 }, toolCalls: [], versionsWritten: [], error };
        } finally {
          this.busySessions.delete(session);
        }
        await this.d.executions.finish(executionId, {
          status: outcome.status,
          inputTokens: outcome.usage.input_tokens,
          outputTokens: outcome.usage.output_tokens,
          toolCalls: outcome.toolCalls,
          versionsWritten: outcome.versionsWritten,
          error: outcome.error,
        });
        await this.d.sessionStore.touch(session, nowIso());
        emit({ type: 'done', session_id: session, execution_id: executionId, status: outcome.status, usage: outcome.usage });
        return outcome;
      },
    };
  }

  /** A provider that is not configured is the server's state, not the client's mistake: 503 naming the setting. */
  private resolveModel(ref: string) {
    try {
      return this.d.providers.resolve(ref);
    } catch (err) {
      if (err instanceof ProviderNotConfigured) throw new DomainError('SERVICE_UNAVAILABLE', `This agent's model (${ref}) cannot be used: ${err.message}.`, { setting: err.setting, model: ref });
      if (err instanceof InvalidModelRef) throw invalidField('model', `the agent's ${err.message}`);
      throw err;
    }
  }

  /** Writes are offered only to a chatter who may write the project (or the agent's own key). */
  private async mayWrite(principal: Principal, projectId: string): Promise<boolean> {
    if (principal.kind === 'key') return true;
    try {
      await this.d.authorizer.requireProject(principal, projectId, 'content:write');
      return true;
    } catch {
      return false;
    }
  }
}

/** A toolset whose calls are also logged (the agent's status counts calls from every surface). */
function logged(toolset: AgentToolset, record: (name: string, ok: boolean, ms: number) => Promise<void>): AgentToolset {
  return {
    definitions: toolset.definitions,
    async run(call) {
      const started = performance.now();
      const outcome = await toolset.run(call);
      await record(call.name, !outcome.isError, Math.round(performance.now() - started));
      return outcome;
    },
  };
}

/** A new session is named after the start of its first message. */
function titleFrom(message: string): string {
  const line = message.trim().split('\n')[0]!.replace(/\s+/g, ' ');
  return line.length > 80 ? `${line.slice(0, 79)}…` : line || 'New chat';
}
