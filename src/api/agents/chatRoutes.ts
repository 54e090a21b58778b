import { z } from 'zod';
import { EventStream } from '../../agents/chat/eventStream.ts';
import type { AgentsService } from '../../agents/service.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { visibleAgent } from '../shared/connectionResource.ts';

/** The longest message a client may send in one turn, characters. */
export const MAX_MESSAGE_CHARS = 100_000;

const chatBody = z
  .object({
    agent_id: z.string().min(1).max(100),
    message: z.string().trim().min(1, 'must not be empty').max(MAX_MESSAGE_CHARS),
    session_id: z.string().min(1).max(100).optional().describe('continue this chat session; omitted: a new session is started'),
  })
  .strict();

const streamDescription = `The answer is a \`text/event-stream\`, not the envelope: one \`data: <JSON>\` line per event, each with a \`type\`:
- \`text\` {content}: a piece of the agent's answer, as the model produces it;
- \`tool_call\` {id, name, arguments}: the agent calls one of its tools (they come from its accesses, bash tools and the project's search index);
- \`tool_result\` {id, name, content, is_error, truncated?}: the tool's result (content is the result object, or the text the model was given when it was cut); a call past the agent's \`max_tool_calls_per_round\` in one answer is not run, and its result is the error \`too_many_tool_calls\`;
- \`error\` {code, message, retry_after_ms?}: the turn failed (\`provider_unauthorized\`, \`provider_rate_limited\`, \`provider_unavailable\`, \`provider_timeout\`, \`provider_bad_request\`, \`max_tool_rounds\`, \`internal_error\`);
- \`done\` {session_id, execution_id, status, usage {input_tokens, output_tokens}}: always last.

Everything that can be refused is refused before the stream starts, in the envelope: 404 (agent or session not visible), 403 (agent paused), 409 (a turn is already running in the session), 422, 503 SERVICE_UNAVAILABLE when the agent's model provider is not configured (details.setting names the variable). Closing the connection cancels the turn (the execution is \`cancelled\`). Comment lines (\`: keep-alive\`) are heartbeats.`;

/**
 * `POST /agents` (spec 4.8 and section 6): a chat turn with an agent, streamed. The route checks
 * project:read on the agent's project (members hold it with content:read; the agent's own key
 * holds it, and acts through the agent's accesses); the chat lets a key chat only as itself.
 */
export function agentChatRoutes(s: { agents: Pick<AgentsService, 'agents' | 'chat'> }): RouteGroup {
  return {
    prefix: '',
    tag: 'Agents',
    routes: [
      route({
        method: 'post',
        path: '/agents',
        summary: 'Chat with an agent: the answer streams as Server-Sent Events (text, tool_call, tool_result, error, done)',
        description: streamDescription,
        streams: 'text/event-stream',
        permission: 'project:read',
        authorize: { resource: ({ body }, principal) => visibleAgent(principal, s.agents.agents.find(body.agent_id)), name: 'Agent' },
        body: chatBody,
        async handle(ctx, { body, access }) {
          const turn = await s.agents.chat.begin(access.principal, access.record, { message: body.message, sessionId: body.session_id });
          ctx.respond = false;
          const stream = new EventStream(ctx.req, ctx.res);
          try {
            await turn.run((event) => stream.send(event), stream.signal);
          } finally {
            stream.end();
          }
        },
      }),
    ],
  };
}
