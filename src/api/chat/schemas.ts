import { z } from 'zod';
import { MAX_LIMIT, paginationQuery } from '../../http/pagination.ts';

const id = z.string().min(1).max(100);
const title = z.string().trim().max(200);

export const sessionParams = z.object({ session_id: id });

export const createSessionBody = z.object({ agent_id: id, title: title.optional().describe("default ''") }).strict();
export const renameSessionBody = z.object({ title }).strict();

export const listSessionsQuery = paginationQuery
  .extend({ agent_id: id.optional(), project_id: id.optional() })
  .refine((q) => q.agent_id !== undefined || q.project_id !== undefined, { message: 'agent_id or project_id is required', path: ['agent_id'] });

export const messagesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  after_seq: z.coerce.number().int().min(0).default(0).describe("the page starts after this seq (0: from the first message); the previous page's `next_after_seq`"),
});

export const sessionSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  project_id: z.string(),
  title: z.string(),
  created_by: z.string().describe('the user (or the agent key) that started it'),
  created_at: z.string(),
  updated_at: z.string().describe('moves with every message'),
});

export const sessionList = z.object({ sessions: z.array(sessionSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });

export const messageSchema = z.object({
  id: z.string(),
  seq: z.number().int().describe('its place in the session, from 1'),
  role: z.enum(['user', 'assistant', 'tool_call', 'tool_result']),
  content: z
    .record(z.string(), z.unknown())
    .describe('user, assistant: {text}; tool_call: {id, name, arguments, arguments_error?}; tool_result: {tool_call_id, name, content, is_error}'),
  execution_id: z.string().nullable().describe('the chat turn that produced it'),
  created_at: z.string(),
});

export const messageList = z.object({
  messages: z.array(messageSchema),
  next_after_seq: z.number().int().nullable().describe('pass as `after_seq` for the next page; null on the last page'),
});
