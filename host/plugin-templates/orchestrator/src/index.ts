import { definePlugin, extensionPoints, z } from '@agent-host/sdk';
import type { ChatMessage, Orchestrator, TurnContext, TurnEvent, TurnResult } from '@agent-host/sdk';

/** A chat runtime: asks the agent's model with its system prompt, the history and the message, streaming its tokens. */
class __CLASS__ implements Orchestrator {
  readonly displayName = '__TITLE__';
  readonly description = "Answers with the agent's model from its system prompt and the conversation.";
  readonly experimental = true;

  constructor(private readonly preamble: string) {}

  async *run(context: TurnContext): AsyncGenerator<TurnEvent, TurnResult, void> {
    const system = [this.preamble, context.agent.system_prompt].filter(Boolean).join('\n\n');
    const messages: ChatMessage[] = [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...context.history,
      { role: 'user', content: context.message },
    ];
    let reply = '';
    // A model failure or an aborted turn throws out of the loop: the host ends the turn with an error event.
    for await (const chunk of context.models.chatModel('final').stream(messages, { signal: context.signal })) {
      if (chunk.type !== 'token') continue;
      reply += chunk.content;
      yield { type: 'token', content: chunk.content };
    }
    return { reply, response_source: '__KEY__', observation: {} };
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  config: z.object({
    preamble: z.string().default('').describe('Text put before the agent system prompt in every turn'),
  }),
  register(env) {
    env.registerInit({
      deps: { orchestrators: extensionPoints.orchestrators },
      async init({ orchestrators }, config) {
        orchestrators.register('__KEY__', new __CLASS__(config.preamble));
      },
    });
  },
});
