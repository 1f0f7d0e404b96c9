import type { ToolBackend, ToolCallOptions, ToolCallOutcome, ToolProvider, ToolServerConnection, ValidationIssue } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';

/** The transport of the tool servers core lists for tool providers; `connection_config` is `{"provider": "<key>"}`. */
export const TOOL_PROVIDER_TRANSPORT = 'tool_provider';

const providerKey = (config: Readonly<Record<string, unknown>>) => (typeof config.provider === 'string' ? config.provider : '');

/**
 * Tool providers behind the tool backend interface, so their tools go through the MCP pipeline unchanged (mounts,
 * allowlists, gates, limits, approvals, audits). Core holds the provider to the call's deadline and its signal, and a
 * provider that throws answers an `error` outcome, as a transport would.
 */
export function toolProviderBackend(providers: KeyedRegistry<ToolProvider>): ToolBackend {
  const providerOf = (server: ToolServerConnection): ToolProvider => {
    const key = providerKey(server.connection_config);
    const provider = providers.get(key);
    if (!provider) throw new Error(`tool provider "${key}" is not enabled on this host`);
    return provider;
  };
  return {
    validateConfig(config): ValidationIssue[] {
      const key = providerKey(config);
      if (!key) return [{ loc: ['connection_config', 'provider'], msg: 'names the tool provider (a key of an enabled plugin)', type: 'missing' }];
      return providers.has(key)
        ? []
        : [{ loc: ['connection_config', 'provider'], msg: `no enabled plugin provides tool provider "${key}"`, type: 'invalid_value' }];
    },
    async healthCheck(server, options) {
      try {
        const tools = await withinDeadline(() => providerOf(server).listTools(options), options, 'tools/list');
        return { ok: true, message: `${tools.length} tools` };
      } catch (error) {
        return { ok: false, message: (error as Error).message };
      }
    },
    listTools: (server, options) => withinDeadline(() => providerOf(server).listTools(options), options, 'tools/list'),
    async callTool(server, name, args, options): Promise<ToolCallOutcome> {
      try {
        return await withinDeadline(() => providerOf(server).callTool(name, args, options), options, `tools/call ${name}`);
      } catch (error) {
        if (error instanceof DeadlineError) return { status: 'timeout', result: null, error: error.message };
        return { status: 'error', result: null, error: (error as Error).message };
      }
    },
    close: async () => undefined,
  };
}

class DeadlineError extends Error {}

/** `work`, unless the signal has aborted already; a `DeadlineError` once `timeoutMs` passes; an error once the signal aborts. */
async function withinDeadline<T>(work: () => Promise<T>, options: ToolCallOptions, what: string): Promise<T> {
  if (options.signal?.aborted) throw new Error(`${what} was cancelled`);
  // A provider that throws at once rejects here, never leaving the deadline's timer behind.
  const running = work();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what} timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    onAbort = () => reject(new Error(`${what} was cancelled`));
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([running, deadline]).finally(() => {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  });
}
