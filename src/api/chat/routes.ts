import type { AgentsService } from '../../agents/service.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { visibleAgent } from '../shared/connectionResource.ts';
import { presentMessage, presentSession } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * project:read on the agent's (the session's) project: members hold it with content:read, and so
 * does an agent's own key; the domain then keeps a key to its own agent's sessions.
 */
const CHAT = 'project:read';

/**
 * Chat sessions (spec 4.8, issue 14). Whoever may chat with an agent (content:read on its
 * project, or the agent's own key) starts sessions; a session is seen by whoever started it and
 * by the project's admins. The routes check the project; the domain the finer part
 * (src/agents/sessions/chatSessions.ts).
 */
export function chatSessionRoutes(s: { agents: Pick<AgentsService, 'agents' | 'sessions' | 'sessionStore'> }): RouteGroup {
  const sessions = () => s.agents.sessions;
  /** A session by id: one in a project the caller cannot see is "Chat session not found.". */
  const session = { resource: ({ params }: { params: { session_id: string } }) => s.agents.sessionStore.find(params.session_id), name: 'Chat session' };
  return {
    prefix: '/chat/sessions',
    tag: 'Chat',
    routes: [
      route({
        method: 'post',
        path: '/',
        summary: 'Start a chat session with an agent',
        permission: CHAT,
        authorize: { resource: ({ body }, principal) => visibleAgent(principal, s.agents.agents.find(body.agent_id)), name: 'Agent' },
        status: 201,
        body: schema.createSessionBody,
        response: schema.sessionSchema,
        async handle(ctx, { body, access }) {
          created(ctx, presentSession(await sessions().create(access.principal, access.record, body.title)), 'Chat session started');
        },
      }),
      route({
        method: 'get',
        path: '/',
        summary: "List an agent's (agent_id) or a project's (project_id) chat sessions, latest activity first",
        description: "Your own sessions; a project admin's list holds everyone's.",
        // Either an agent or a project is named: an unseen agent is "Agent not found.", an unseen project "Project not found.".
        authorize: { checkedBy: 'the list names an agent or a project, and ChatSessions.list checks whichever is named' },
        query: schema.listSessionsQuery,
        response: schema.sessionList,
        async handle(ctx, { query }) {
          const { items, total } = await sessions().list(principalOf(ctx), { agentId: query.agent_id, projectId: query.project_id }, query);
          ok(ctx, { sessions: items.map(presentSession), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'get',
        path: '/:session_id',
        summary: 'Read a chat session',
        permission: CHAT,
        authorize: session,
        params: schema.sessionParams,
        response: schema.sessionSchema,
        async handle(ctx, { access }) {
          ok(ctx, presentSession(await sessions().seenBy(access.principal, access.record)));
        },
      }),
      route({
        method: 'patch',
        path: '/:session_id',
        summary: 'Rename a chat session',
        permission: CHAT,
        authorize: session,
        params: schema.sessionParams,
        body: schema.renameSessionBody,
        response: schema.sessionSchema,
        async handle(ctx, { body, access }) {
          ok(ctx, presentSession(await sessions().rename(access.principal, access.record, body.title)), 'Chat session renamed');
        },
      }),
      route({
        method: 'delete',
        path: '/:session_id',
        summary: 'Delete a chat session and its messages (the executions of its turns stay, without it)',
        permission: CHAT,
        authorize: session,
        params: schema.sessionParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await sessions().delete(access.principal, access.record);
          ok(ctx, presentDeleted(params.session_id), 'Chat session deleted');
        },
      }),
      route({
        method: 'get',
        path: '/:session_id/messages',
        summary: "A session's messages in order: user, assistant, tool call and tool result",
        permission: CHAT,
        authorize: session,
        params: schema.sessionParams,
        query: schema.messagesQuery,
        response: schema.messageList,
        async handle(ctx, { query, access }) {
          const { items, next } = await sessions().messages(access.principal, access.record, { afterSeq: query.after_seq, limit: query.limit });
          ok(ctx, { messages: items.map(presentMessage), next_after_seq: next });
        },
      }),
    ],
  };
}
