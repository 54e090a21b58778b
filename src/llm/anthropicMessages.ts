import type { ContentBlockParam, MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatMessage, ToolDefinition } from './provider.ts';

/**
 * The loop's history as Anthropic messages. An assistant turn is its text (first, when there is
 * any) and its tool_use blocks; the results of one turn's tool calls go back together as ONE user
 * message of tool_result blocks, as the API expects them.
 */
export function toAnthropicMessages(messages: ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  let results: ToolResultBlockParam[] | null = null;
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!results) out.push({ role: 'user', content: (results = []) });
      results.push({ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content, is_error: m.isError });
      continue;
    }
    results = null;
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else {
      const content: ContentBlockParam[] = [];
      // The API refuses empty text blocks.
      if (m.content) content.push({ type: 'text', text: m.content });
      for (const c of m.toolCalls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
      // A turn that said nothing and called nothing carries nothing (and an empty one is refused).
      if (content.length > 0) out.push({ role: 'assistant', content });
    }
  }
  return out;
}

export function toAnthropicTools(tools: ToolDefinition[]): Tool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema as Tool.InputSchema }));
}
