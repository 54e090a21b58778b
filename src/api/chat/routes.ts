import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentMessage, presentSession } from './presenter.ts';
import * as schema from './schemas.ts';

const CHAT = 'content:read';

/**
 * Chat sessions (spec 4.8, issue 14). Whoever may chat with an agent (content:read on its
 * project, or the agent's own key) starts sessions; a session is seen by whoever started it and
 * by the project's admins. The domain checks both (src/agents/sessions/chatSessions.ts).
 */
export function chatSessionRoutes(s: Services): RouteGroup {
  const sessions = () => s.agents.sessions;
  return {
    prefix: '/chat/sessions',
    tag: 'Chat',
    routes: [
      route({
        method: 'post',
        path: '/',
        summary: 'Start a chat session with an agent',
        permission: CHAT,
        status: 201,
        body: schema.createSessionBody,
        response: schema.sessionSchema,
        handle(ctx, { body }) {
          created(ctx, presentSession(sessions().create(principalOf(ctx), { agentId: body.agent_id, title: body.title })), 'Chat session started');
        },
      }),
      route({
        method: 'get',
        path: '/',
        summary: "List an agent's (agent_id) or a project's (project_id) chat sessions, latest activity first",
        description: "Your own sessions; a project admin's list holds everyone's.",
        permission: CHAT,
        query: schema.listSessionsQuery,
        response: schema.sessionList,
        handle(ctx, { query }) {
          const { items, total } = sessions().list(principalOf(ctx), { agentId: query.agent_id, projectId: query.project_id }, query);
          ok(ctx, { sessions: items.map(presentSession), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'get',
        path: '/:session_id',
        summary: 'Read a chat session',
        permission: CHAT,
        params: schema.sessionParams,
        response: schema.sessionSchema,
        handle(ctx, { params }) {
          ok(ctx, presentSession(sessions().visible(principalOf(ctx), params.session_id)));
        },
      }),
      route({
        method: 'patch',
        path: '/:session_id',
        summary: 'Rename a chat session',
        permission: CHAT,
        params: schema.sessionParams,
        body: schema.renameSessionBody,
        response: schema.sessionSchema,
        handle(ctx, { params, body }) {
          ok(ctx, presentSession(sessions().rename(principalOf(ctx), params.session_id, body.title)), 'Chat session renamed');
        },
      }),
      route({
        method: 'delete',
        path: '/:session_id',
        summary: 'Delete a chat session and its messages (the executions of its turns stay, without it)',
        permission: CHAT,
        params: schema.sessionParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          sessions().delete(principalOf(ctx), params.session_id);
          ok(ctx, presentDeleted(params.session_id), 'Chat session deleted');
        },
      }),
      route({
        method: 'get',
        path: '/:session_id/messages',
        summary: "A session's messages in order: user, assistant, tool call and tool result",
        permission: CHAT,
        params: schema.sessionParams,
        query: schema.messagesQuery,
        response: schema.messageList,
        handle(ctx, { params, query }) {
          const { items, next } = sessions().messages(principalOf(ctx), params.session_id, { afterSeq: query.after_seq, limit: query.limit });
          ok(ctx, { messages: items.map(presentMessage), next_after_seq: next });
        },
      }),
    ],
  };
}
