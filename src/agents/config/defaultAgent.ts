import type { AccessInput } from './accessStore.ts';
import { DEFAULT_MAX_TOOL_CALLS_PER_ROUND, DEFAULT_MAX_TOOL_ROUNDS, defaultAccessTools, type AgentSettings } from './agentRecord.ts';

export const DEFAULT_AGENT_NAME = 'default';

/** What a project's default agent is told: its tools, and that what it writes is kept and attributed. */
export const DEFAULT_SYSTEM_PROMPT = [
  "You are the assistant of this project in Content Node Service, a versioned store of the project's files (Markdown, text, JSON and others).",
  'Use your tools to answer from the content rather than from memory:',
  '- ls lists a folder, tree shows a subtree, cat reads a file, search finds passages by meaning and keywords, query_json reads parts of a JSON file;',
  '- write creates or replaces a file.',
  'Paths are relative to the project. Read a file before you change it, and change only what you were asked to.',
  'Every write becomes a new version of the file, recorded with you as its author: nothing is lost, and people can review or roll back what you did.',
  'When you are not sure what is wanted, ask before writing. Say which files you read or changed in your answer.',
].join('\n');

export function defaultAgentSettings(model: string): AgentSettings {
  return {
    system_prompt: DEFAULT_SYSTEM_PROMPT,
    model,
    description: "The project's default assistant.",
    temperature: null,
    max_tool_rounds: DEFAULT_MAX_TOOL_ROUNDS,
    max_tool_calls_per_round: DEFAULT_MAX_TOOL_CALLS_PER_ROUND,
  };
}

/** The default agent's one access: the whole project, read and write, the default tools. */
export const defaultAgentAccess: AccessInput = { node_id: null, mode: 'read_write', tools: [...defaultAccessTools.read_write] };
