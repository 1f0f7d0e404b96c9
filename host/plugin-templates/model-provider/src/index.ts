import {
  definePlugin,
  extensionPoints,
  type ChatCallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatModel,
  type ChatModelSpec,
  type ChatStreamChunk,
  type ModelAvailability,
  type ModelProvider,
} from '@agent-host/sdk';

/**
 * A chat model. This one answers offline by repeating the last user message; replace `stream` with calls to your
 * model's API (honour `options.signal` and `spec.timeoutMs`), yielding each token as it arrives.
 */
class EchoModel implements ChatModel {
  readonly provider = '__KEY__';

  constructor(private readonly spec: ChatModelSpec) {}

  get modelName(): string {
    return this.spec.model_name;
  }

  async *stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncGenerator<ChatStreamChunk> {
    options?.signal?.throwIfAborted();
    const question = [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
    const words = `You asked: ${question}`.split(/(?<= )/);
    for (const word of words) {
      options?.signal?.throwIfAborted();
      yield { type: 'token', content: word };
    }
    yield { type: 'usage', usage: { input_tokens: messages.reduce((n, m) => n + m.content.split(/\s+/).length, 0), output_tokens: words.length } };
  }

  async invoke(messages: ChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion> {
    const completion: ChatCompletion = { content: '', tool_calls: [] };
    for await (const chunk of this.stream(messages, options)) {
      if (chunk.type === 'token') completion.content += chunk.content;
      if (chunk.type === 'usage') completion.usage = chunk.usage;
    }
    return completion;
  }
}

class __CLASS__ implements ModelProvider {
  readonly displayName = '__TITLE__';
  readonly offline = true;

  createChatModel(spec: ChatModelSpec): ChatModel {
    return new EchoModel(spec);
  }

  availability(spec: ChatModelSpec): ModelAvailability {
    return spec.model_name.trim() ? { available: true } : { available: false, reason: 'the model has no name' };
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  register(env) {
    env.registerInit({
      deps: { modelProviders: extensionPoints.modelProviders },
      async init({ modelProviders }) {
        modelProviders.register('__KEY__', new __CLASS__());
      },
    });
  },
});
