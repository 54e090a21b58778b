import type { StoredMessage } from '../../agents/sessions/messageStore.ts';
import type { ChatSession } from '../../agents/sessions/sessionStore.ts';

export const presentSession = (s: ChatSession) => ({
  id: s.id,
  agent_id: s.agent_id,
  project_id: s.project_id,
  title: s.title,
  created_by: s.created_by,
  created_at: s.created_at,
  updated_at: s.updated_at,
});

export const presentMessage = (m: StoredMessage) => ({ id: m.id, seq: m.seq, role: m.role, content: m.content, execution_id: m.execution_id, created_at: m.created_at });
