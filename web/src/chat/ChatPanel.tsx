import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, query } from '../api/client.ts';
import { streamTurn } from './chatStream.ts';
import type { AgentSummary, ChatEvent, ExecutionSummary, WrittenVersion } from './types.ts';
import { VersionLink } from './VersionLink.tsx';

export interface ChatProps {
  projectId: string;
  /** Opens a node in the tree. */
  onOpen: (path: string) => void;
  /** The conversation the address names (`/chat/<session id>`): shown with its messages. */
  session?: string | null;
  /** The conversation changed (started, or a new chat: null): the address follows. */
  onSession?: (id: string | null) => void;
}

/** A stored message of GET /chat/sessions/{id}/messages. */
interface StoredMessage {
  role: 'user' | 'assistant' | 'tool_call' | 'tool_result';
  content: Record<string, unknown>;
  execution_id: string | null;
}

type Item =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; id: string; name: string; arguments: Record<string, unknown>; result?: { content: unknown; is_error: boolean; truncated?: boolean } }
  | { kind: 'error'; code: string; message: string };

interface Turn {
  key: number;
  message: string;
  agent: string;
  items: Item[];
  state: 'streaming' | 'succeeded' | 'failed' | 'cancelled' | 'stopped';
  versions: WrittenVersion[];
  usage?: { input_tokens: number; output_tokens: number };
}

/**
 * A chat with one of the project's agents (`POST /agents`, streamed): the answer is shown as it
 * arrives, tool calls and their results fold away in `<details>`, and every version the agent
 * wrote links to its diff. Follow-ups continue the session (`session_id` from `done`); *Stop*
 * closes the connection, which cancels the turn. Loaded on first use (a dynamic import).
 */
export function ChatPanel({ projectId, onOpen, session: wanted = null, onSession }: ChatProps) {
  const [agents, setAgents] = useState<AgentSummary[] | null>(null);
  const [agentId, setAgentId] = useState('');
  const [session, setSession] = useState<string | null>(null);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [text, setText] = useState('');
  const [streaming, setStreaming] = useState(false);
  const [alert, setAlert] = useState<string | null>(null);
  const running = useRef<AbortController | null>(null);
  const turnCount = useRef(0);
  const log = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  // The project's default agent is made on first use; then every agent of the project is listed.
  useEffect(() => {
    let gone = false;
    (async () => {
      const fallback = await api<AgentSummary>('GET', `/agent-config/default${query({ project_id: projectId })}`).catch(() => null);
      let listed: AgentSummary[] = [];
      try {
        listed = (await api<{ agents: AgentSummary[] }>('GET', `/agent-config/${query({ project_id: projectId, limit: 100 })}`)).agents;
      } catch (err) {
        if (!fallback) throw err;
      }
      if (fallback && !listed.some((a) => a.id === fallback.id)) listed.unshift(fallback);
      if (gone) return;
      setAgents(listed);
      setAgentId((listed.find((a) => a.is_default && a.status === 'active') ?? listed.find((a) => a.status === 'active') ?? listed[0])?.id ?? '');
    })().catch((err: Error) => {
      if (gone) return;
      setAgents([]);
      setAlert(`The agents could not be listed: ${err.message}`);
    });
    return () => {
      gone = true;
    };
  }, [projectId]);

  // A conversation named by the address (a link, a reload): its agent chosen, its turns shown as stored.
  useEffect(() => {
    if (!wanted || wanted === session || running.current) return;
    let gone = false;
    (async () => {
      const record = await api<{ id: string; agent_id: string }>('GET', `/chat/sessions/${encodeURIComponent(wanted)}`);
      const messages: StoredMessage[] = [];
      for (let after: number | null = 0; after !== null; ) {
        const page: { messages: StoredMessage[]; next_after_seq: number | null } = await api('GET', `/chat/sessions/${encodeURIComponent(wanted)}/messages${query({ after_seq: after, limit: 200 })}`);
        messages.push(...page.messages);
        after = page.next_after_seq;
      }
      if (gone) return;
      const restored = turnsOf(messages, agents?.find((a) => a.id === record.agent_id)?.name ?? 'agent');
      turnCount.current = restored.length;
      setAgentId(record.agent_id);
      setSession(record.id);
      setTurns(restored.map((t) => t.turn));
      for (const t of restored) {
        if (t.executionId) void versionsOf(record.agent_id, t.executionId).then((v) => v && setTurns((all) => all.map((x) => (x.key === t.turn.key ? { ...x, versions: v } : x))));
      }
    })().catch((err: Error) => {
      if (!gone) setAlert(err instanceof ApiError && err.status === 404 ? 'Not found or no access: this conversation does not exist, or is not yours to see.' : `The conversation could not be loaded: ${err.message}`);
    });
    return () => {
      gone = true;
    };
  }, [wanted, agents !== null]);

  // Leaving the panel (another project, signing out) cancels a running turn.
  useEffect(() => () => running.current?.abort(), []);

  useEffect(() => {
    const el = log.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [turns]);

  // When Stop goes away with the turn, focus comes back to the message field rather than being lost.
  useEffect(() => {
    if (!streaming && (document.activeElement === document.body || document.activeElement === null)) input.current?.focus();
  }, [streaming]);

  const agent = agents?.find((a) => a.id === agentId);

  const newChat = () => {
    setSession(null);
    onSession?.(null);
    setTurns([]);
    setAlert(null);
  };

  const send = async (e: Event) => {
    e.preventDefault();
    const message = text.trim();
    if (!message || !agent || running.current) return;
    const controller = new AbortController();
    running.current = controller;
    const key = ++turnCount.current;
    const update = (fn: (t: Turn) => Turn) => setTurns((all) => all.map((t) => (t.key === key ? fn(t) : t)));
    setTurns((all) => [...all, { key, message, agent: agent.name, items: [], state: 'streaming', versions: [] }]);
    setText('');
    setAlert(null);
    setStreaming(true);
    const ended: { done?: Extract<ChatEvent, { type: 'done' }> } = {};
    try {
      await streamTurn({ agent_id: agent.id, message, ...(session ? { session_id: session } : {}) }, controller.signal, (event) => {
        if (event.type === 'done') {
          ended.done = event;
          setSession(event.session_id);
          onSession?.(event.session_id);
          update((t) => ({ ...t, state: event.status === 'succeeded' ? 'succeeded' : event.status === 'cancelled' ? 'cancelled' : 'failed', usage: event.usage }));
        } else update((t) => apply(t, event));
      });
      if (!ended.done) update((t) => ({ ...t, state: 'failed', items: [...t.items, { kind: 'error', code: 'stream_ended', message: 'The answer ended before the turn was done.' }] }));
      // The execution record is the full list (bash tools included), and leaves out drafts.
      else void versionsOf(agent.id, ended.done.execution_id).then((v) => v && update((t) => ({ ...t, versions: v })));
    } catch (err) {
      if (controller.signal.aborted) update((t) => ({ ...t, state: 'stopped' }));
      else if (err instanceof ApiError) {
        // Refused before anything ran: the message goes back into the field, to send again later.
        setTurns((all) => all.filter((t) => t.key !== key));
        setText(message);
        setAlert(refusal(err));
      } else update((t) => ({ ...t, state: 'failed', items: [...t.items, { kind: 'error', code: 'network', message: `The connection broke: ${(err as Error).message}` }] }));
    } finally {
      running.current = null;
      setStreaming(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    // Ctrl+Enter (⌘+Enter) sends; Enter alone is a new line.
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      (e.currentTarget as HTMLTextAreaElement).form?.requestSubmit();
    }
  };

  return (
    <section class="chat" aria-label="Chat">
      <header class="bar">
        <h2>Chat</h2>
        {agents && agents.length > 0 && (
          <label>
            Agent
            <select
              value={agentId}
              disabled={streaming}
              onChange={(e) => {
                setAgentId(e.currentTarget.value);
                newChat();
              }}
            >
              {agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} ({a.model}){a.status !== 'active' ? `, ${a.status}` : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        {turns.length > 0 && (
          <button type="button" disabled={streaming} onClick={newChat}>New chat</button>
        )}
      </header>
      {agents === null && <p aria-busy="true">Loading agents…</p>}
      {agents?.length === 0 && !alert && <p class="muted">This project has no agent you may chat with.</p>}
      <div class="chat-log" role="log" aria-label="Conversation" ref={log} tabIndex={turns.length > 0 ? 0 : -1}>
        {turns.length === 0 && agents && agents.length > 0 && (
          <p class="muted">Ask {agent?.name ?? 'the agent'} about this project's content, or to change it. Its changes are versions you can review.</p>
        )}
        {turns.map((t) => (
          <TurnView key={t.key} turn={t} projectId={projectId} onOpen={onOpen} />
        ))}
      </div>
      {alert && <p role="alert" class="error">{alert}</p>}
      <form class="chat-form" aria-label="Write to the agent" onSubmit={send}>
        <label>
          Message
          <textarea ref={input} rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} onKeyDown={onKeyDown} placeholder="Ctrl+Enter sends" />
        </label>
        <div class="actions">
          <button type="submit" disabled={streaming || !text.trim() || !agent}>Send</button>
          {streaming && (
            <button type="button" class="danger" onClick={() => running.current?.abort()}>Stop</button>
          )}
        </div>
      </form>
    </section>
  );
}

function TurnView({ turn, projectId, onOpen }: { turn: Turn; projectId: string; onOpen: (path: string) => void }) {
  return (
    <article class="turn" aria-label={`You: ${turn.message.slice(0, 60)}`} aria-busy={turn.state === 'streaming'}>
      <div class="said by-user">
        <strong>You</strong>
        <p>{turn.message}</p>
      </div>
      <div class="said by-agent">
        <strong>{turn.agent}</strong>
        {turn.items.map((item, i) =>
          item.kind === 'text' ? (
            <Answer key={i} text={item.text} />
          ) : item.kind === 'tool' ? (
            <ToolCall key={item.id || i} call={item} />
          ) : (
            <p key={i} role="alert" class="error">
              {item.message} <span class="muted">({item.code})</span>
            </p>
          ),
        )}
        {turn.state === 'streaming' && <p class="muted typing" aria-hidden="true">…</p>}
        {turn.versions.length > 0 && (
          <div class="written">
            <p>Versions written:</p>
            <ul aria-label="Versions written">
              {turn.versions.map((v) => (
                <VersionLink key={`${v.path}@${v.version}`} projectId={projectId} written={v} onOpen={onOpen} />
              ))}
            </ul>
          </div>
        )}
        {turn.state === 'stopped' && <p role="status" class="muted">Stopped.</p>}
        {turn.state === 'cancelled' && <p role="status" class="muted">Cancelled.</p>}
        {turn.usage && turn.state !== 'streaming' && (
          <p class="muted usage">
            {turn.usage.input_tokens} tokens in, {turn.usage.output_tokens} out
          </p>
        )}
      </div>
    </article>
  );
}

/** The agent's words, rendered as Markdown and sanitized (marked keeps raw HTML, DOMPurify removes what could run). */
function Answer({ text }: { text: string }) {
  const html = useMemo(() => DOMPurify.sanitize(marked.parse(text, { gfm: true, async: false })), [text]);
  return <div class="answer" dangerouslySetInnerHTML={{ __html: html }} />;
}

function ToolCall({ call }: { call: Extract<Item, { kind: 'tool' }> }) {
  const where = typeof call.arguments.path === 'string' ? ` ${call.arguments.path}` : typeof call.arguments.query === 'string' ? ` “${call.arguments.query}”` : '';
  const state = !call.result ? 'running…' : call.result.is_error ? 'failed' : 'done';
  return (
    <details class={`tool ${call.result?.is_error ? 'failed' : ''}`}>
      <summary>
        Tool {call.name}
        {where}: {state}
      </summary>
      <p class="muted">Arguments</p>
      <pre tabIndex={0} aria-label={`Arguments of ${call.name}`}>{JSON.stringify(call.arguments, null, 2)}</pre>
      {call.result && (
        <>
          <p class="muted">Result{call.result.truncated ? ' (cut for the model)' : ''}</p>
          <pre tabIndex={0} aria-label={`Result of ${call.name}`}>
            {typeof call.result.content === 'string' ? call.result.content : JSON.stringify(call.result.content, null, 2)}
          </pre>
        </>
      )}
    </details>
  );
}

/** A streamed event folded into the turn: text pieces join the text before them, a result finds its call. */
function apply(turn: Turn, event: ChatEvent): Turn {
  const items = [...turn.items];
  const last = items[items.length - 1];
  switch (event.type) {
    case 'text':
      if (last?.kind === 'text') items[items.length - 1] = { kind: 'text', text: last.text + event.content };
      else items.push({ kind: 'text', text: event.content });
      return { ...turn, items };
    case 'tool_call':
      items.push({ kind: 'tool', id: event.id, name: event.name, arguments: event.arguments ?? {} });
      return { ...turn, items };
    case 'tool_result': {
      const at = items.findIndex((i) => i.kind === 'tool' && i.id === event.id && !i.result);
      const result = { content: event.content, is_error: event.is_error, truncated: event.truncated };
      if (at >= 0) items[at] = { ...(items[at] as Extract<Item, { kind: 'tool' }>), result };
      else items.push({ kind: 'tool', id: event.id, name: event.name, arguments: {}, result });
      const written = event.is_error ? null : versionIn(event.content);
      const versions = written && !turn.versions.some((v) => v.path === written.path && v.version === written.version) ? [...turn.versions, written] : turn.versions;
      return { ...turn, items, versions };
    }
    case 'error':
      items.push({ kind: 'error', code: event.code, message: event.message });
      return { ...turn, items };
    default:
      return turn;
  }
}

/** A write's result names the version it made (`changed`, and a project version: not a draft). */
function versionIn(content: unknown): WrittenVersion | null {
  if (!content || typeof content !== 'object') return null;
  const r = content as { path?: unknown; version?: unknown; changed?: unknown; project_version?: unknown };
  return typeof r.path === 'string' && typeof r.version === 'number' && r.changed === true && typeof r.project_version === 'number' ? { path: r.path, version: r.version } : null;
}

/** The versions the turn wrote, as its execution records them (bash tools included); null when unknown. */
/** Stored messages as the turns the panel shows: each user message opens one, the rest fill it in order. */
function turnsOf(messages: StoredMessage[], agent: string): { turn: Turn; executionId: string | null }[] {
  const out: { turn: Turn; executionId: string | null }[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      out.push({ turn: { key: out.length + 1, message: String(m.content.text ?? ''), agent, items: [], state: 'succeeded', versions: [] }, executionId: m.execution_id });
      continue;
    }
    const last = out[out.length - 1];
    if (!last) continue;
    last.executionId ??= m.execution_id;
    const items = last.turn.items;
    if (m.role === 'assistant') items.push({ kind: 'text', text: String(m.content.text ?? '') });
    else if (m.role === 'tool_call') items.push({ kind: 'tool', id: String(m.content.id), name: String(m.content.name), arguments: (m.content.arguments ?? {}) as Record<string, unknown> });
    else {
      const call = items.find((i) => i.kind === 'tool' && i.id === m.content.tool_call_id);
      if (call?.kind === 'tool') call.result = { content: m.content.content, is_error: Boolean(m.content.is_error) };
    }
  }
  return out;
}

async function versionsOf(agentId: string, executionId: string): Promise<WrittenVersion[] | null> {
  try {
    const { executions } = await api<{ executions: ExecutionSummary[] }>('GET', `/agent-config/${agentId}/executions${query({ limit: 20 })}`);
    const mine = executions.find((e) => e.id === executionId);
    if (!mine) return null;
    const seen = new Set<string>();
    return mine.versions_written.filter((v) => !seen.has(`${v.path}@${v.version}`) && seen.add(`${v.path}@${v.version}`));
  } catch {
    return null;
  }
}

/** A refusal before the stream, said plainly (503: the provider setting to configure). */
function refusal(err: ApiError): string {
  const setting = (err.details as { setting?: string } | null)?.setting;
  if (err.status === 503) return `The agent cannot answer: ${err.message}${setting && !err.message.includes(setting) ? ` (set ${setting})` : ''}`;
  if (err.status === 409) return `${err.message} (a turn is still running in this chat; wait for it, or start a new chat).`;
  return err.message;
}
