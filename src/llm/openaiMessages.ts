import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage, ToolDefinition } from './provider.ts';

/** OpenAI has no error flag on a tool result, so a failed call says so in its content. */
export const TOOL_ERROR_PREFIX = 'Error: the tool call failed. ';

/** The loop's history as chat/completions messages: the system prompt first, then one message per turn. */
export function toOpenAiMessages(system: string, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.isError ? TOOL_ERROR_PREFIX + m.content : m.content });
    else if (m.toolCalls.length === 0) out.push({ role: 'assistant', content: m.content });
    else {
      out.push({
        role: 'assistant',
        // The API wants null, not '', beside tool calls that came without text.
        content: m.content || null,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
      });
    }
  }
  return out;
}

export function toOpenAiTools(tools: ToolDefinition[]): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
}
