import {
  definePlugin,
  extensionPoints,
  z,
  type ToolBackend,
  type ToolCallOutcome,
  type ToolDescriptor,
  type ToolServerConnection,
  type ValidationIssue,
} from '@agent-host/sdk';

/** What an administrator enters as the server's `connection_config`. */
const connectionConfig = z.object({ greeting: z.string().min(1).describe('Put before every echoed text') }).strict();

const TOOLS: ToolDescriptor[] = [
  {
    name: 'echo',
    description: 'Repeats a text after the server greeting.',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

/**
 * A tool transport in-process: the tools run here rather than behind a protocol. Replace `callTool` with calls to
 * your service; keep failures as `error` outcomes and honour the deadline and the caller's signal.
 */
class __CLASS__ implements ToolBackend {
  validateConfig(config: Readonly<Record<string, unknown>>): ValidationIssue[] {
    const parsed = connectionConfig.safeParse(config);
    return parsed.success
      ? []
      : parsed.error.issues.map((issue) => ({ loc: ['connection_config', ...issue.path.map(String)], msg: issue.message, type: issue.code }));
  }

  async healthCheck(server: ToolServerConnection): Promise<{ ok: boolean; message?: string }> {
    const issues = this.validateConfig(server.connection_config);
    return issues.length ? { ok: false, message: issues[0]!.msg } : { ok: true };
  }

  async listTools(): Promise<ToolDescriptor[]> {
    return TOOLS;
  }

  async callTool(
    server: ToolServerConnection,
    name: string,
    args: Record<string, unknown>,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<ToolCallOutcome> {
    if (options.signal?.aborted) return { status: 'error', result: null, error: 'the caller has gone' };
    if (name !== 'echo') return { status: 'error', result: null, error: `no tool named "${name}"` };
    if (typeof args.text !== 'string') return { status: 'error', result: null, error: 'text must be a string' };
    return { status: 'success', result: { text: `${String(server.connection_config.greeting)} ${args.text}` } };
  }

  async close(): Promise<void> {}
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  register(env) {
    env.registerInit({
      deps: { toolBackends: extensionPoints.toolBackends },
      async init({ toolBackends }) {
        toolBackends.register('__KEY__', new __CLASS__());
      },
    });
  },
});
