import type { ChatMessage, Orchestrator, RetrievedChunk, TurnContext, TurnEvent, TurnResult } from '@agent-host/sdk';

/** The system message: the agent's prompt plus the retrieved passages. */
export function systemMessage(context: TurnContext, chunks: RetrievedChunk[]): ChatMessage | undefined {
  const parts: string[] = [];
  if (context.agent.system_prompt) parts.push(context.agent.system_prompt);
  if (chunks.length) {
    const hide = context.agent.hide_rag_source_filename;
    parts.push(
      'Answer from these passages when they are relevant:\n\n' +
        chunks.map((c) => (hide || !c.document_filename ? c.content : `[${c.document_filename}] ${c.content}`)).join('\n\n'),
    );
  }
  return parts.length ? { role: 'system', content: parts.join('\n\n') } : undefined;
}

/**
 * `core_chat_v1`: retrieval from the agent's mounted sources, then the final
 * model call streamed token by token. Core applies fixed responses, limits
 * and persistence around it; the tool and skill stages plug in before the
 * final call.
 */
export class CoreChatOrchestrator implements Orchestrator {
  readonly displayName = 'Core chat';
  readonly description = 'Default chat runtime: fixed responses, quick match, retrieval, skills, MCP tool pipeline and a final model call.';
  readonly experimental = false;

  async *run(context: TurnContext): AsyncGenerator<TurnEvent, TurnResult, void> {
    const chunks = await context.trace.span('rag-retrieval', async (attributes) => {
      const found = await context.retrieval.search(context.message);
      attributes.chunk_count = found.length;
      return found;
    });
    const system = systemMessage(context, chunks);
    const messages: ChatMessage[] = [...(system ? [system] : []), ...context.history, { role: 'user', content: context.message }];
    const model = context.models.chatModel('general');
    let reply = '';
    for await (const chunk of model.stream(messages, { signal: context.signal })) {
      if (chunk.type !== 'token') continue;
      reply += chunk.content;
      yield { type: 'token', content: chunk.content };
    }
    return { reply, response_source: 'model', observation: { rag_chunk_count: chunks.length } };
  }
}
