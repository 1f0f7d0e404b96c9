import { definePlugin, extensionPoints, type ToolCallOutcome, type ToolDescriptor, type ToolProvider } from '@agent-host/sdk';

const TOOLS: ToolDescriptor[] = [
  {
    name: 'count_words',
    description: 'Counts the words of a text.',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

/**
 * Native tools: no transport and no server to configure. The host lists this provider as a tool server that
 * administrators mount on agents; mounts, limits, approvals and audits are the host's. Replace `callTool` with calls to
 * your service; the host holds every call to its deadline and turns a throw into an `error` outcome.
 */
class __CLASS__ implements ToolProvider {
  readonly displayName = '__TITLE__';
  readonly description = 'Counts words.';

  async listTools(): Promise<ToolDescriptor[]> {
    return TOOLS;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolCallOutcome> {
    if (name !== 'count_words') return { status: 'error', result: null, error: `no tool named "${name}"` };
    if (typeof args.text !== 'string') return { status: 'error', result: null, error: 'text must be a string' };
    return { status: 'success', result: { words: args.text.split(/\s+/).filter(Boolean).length } };
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  register(env) {
    env.registerInit({
      deps: { toolProviders: extensionPoints.toolProviders },
      async init({ toolProviders }) {
        toolProviders.register('__KEY__', new __CLASS__());
      },
    });
  },
});
