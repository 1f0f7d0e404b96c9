import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage, type MessageContent } from '@langchain/core/messages';
import type { ChatMessage } from '@agent-host/sdk';

/** SDK messages to LangChain messages. */
export function toLangChain(messages: ChatMessage[]): BaseMessage[] {
  return messages.map((m) => {
    switch (m.role) {
      case 'system':
        return new SystemMessage(m.content);
      case 'user':
        return new HumanMessage(m.content);
      case 'tool':
        return new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id ?? '' });
      case 'assistant':
        return new AIMessage({
          content: m.content,
          tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.arguments, type: 'tool_call' as const })),
        });
    }
  });
}

/** The text of a LangChain message content (string or content blocks). */
export function textOf(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content.map((block) => (typeof block === 'string' ? block : block.type === 'text' ? String(block.text) : '')).join('');
}
