import type { SkillBackend, ToolCallOutcome, ToolHandle } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { allowedBy } from '../mcp/pipeline/policy.js';
import { inactiveReason, MCP_BACKEND, type SkillMcpServers } from './mcp-servers.js';
import type { RunnableSkill } from './skill-mount-store.js';

/** What one skill execution did, for its audit: the tools it called, an allowlist block, the secrets to mask. */
export class ExecutionTrail {
  readonly toolCalls: { tool_name: string; arguments: Record<string, unknown> }[] = [];
  blockedReason: string | null = null;
  secrets: string[] = [];

  constructor(private readonly allowlist: readonly string[]) {}

  /** The MCP mounts' rule: an empty allowlist allows every tool. */
  allows(tool: string): boolean {
    return allowedBy(this.allowlist, tool);
  }

  get lastTool(): string | null {
    return this.toolCalls.at(-1)?.tool_name ?? null;
  }
}

export interface ExecutionDeps {
  backends: KeyedRegistry<SkillBackend>;
  servers: SkillMcpServers;
}

/**
 * Runs one skill call within the mount's `timeout_ms`: the whole of it
 * (resolving the server, the backend and every tool call it makes) shares
 * one deadline. Never throws: a failure is an `error` outcome, the deadline
 * a `timeout`, a cancelled turn an `error`.
 */
export function executeSkill(
  deps: ExecutionDeps,
  mount: RunnableSkill,
  input: Record<string, unknown>,
  trail: ExecutionTrail,
  turnSignal: AbortSignal,
): Promise<ToolCallOutcome> {
  const deadline = Date.now() + mount.timeout_ms;
  const signal = AbortSignal.any([turnSignal, AbortSignal.timeout(mount.timeout_ms)]);
  const stopped = new Promise<ToolCallOutcome>((resolve) => {
    const onAbort = () =>
      resolve(
        turnSignal.aborted
          ? { status: 'error', result: null, error: 'the turn was cancelled' }
          : { status: 'timeout', result: null, error: `skill "${mount.skill_name}" timed out after ${mount.timeout_ms} ms` },
      );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const run = invoke(deps, mount, input, trail, signal, deadline).catch((error: unknown): ToolCallOutcome => ({
    status: 'error',
    result: null,
    error: (error as Error).message,
  }));
  return Promise.race([run, stopped]);
}

async function invoke(
  deps: ExecutionDeps,
  mount: RunnableSkill,
  input: Record<string, unknown>,
  trail: ExecutionTrail,
  signal: AbortSignal,
  deadline: number,
): Promise<ToolCallOutcome> {
  const backend = deps.backends.get(mount.backend_type);
  if (!backend) throw new Error(`no enabled plugin provides skill backend "${mount.backend_type}"`);
  const remaining = () => ({ timeoutMs: Math.max(1, deadline - Date.now()), signal });
  const tools = mount.backend_type === MCP_BACKEND ? await serverTools(deps, mount.backend_ref_id!, trail, remaining) : undefined;
  return backend.invoke(
    { skill_version_id: mount.skill_version_id, backend_ref_id: mount.backend_ref_id, config: mount.config, input, ...(tools && { tools }) },
    remaining(),
  );
}

/** The tools of the skill's MCP server, through its transport's tool backend, with the mount's allowlist applied. */
async function serverTools(
  deps: ExecutionDeps,
  serverId: string,
  trail: ExecutionTrail,
  remaining: () => { timeoutMs: number; signal: AbortSignal },
): Promise<ToolHandle> {
  const reason = inactiveReason(serverId, await deps.servers.status(serverId));
  if (reason) throw new Error(reason);
  const { backend, connection, secretValues } = await deps.servers.resolve(serverId);
  trail.secrets = secretValues;
  return {
    list: async () => (await backend.listTools(connection, remaining())).filter((tool) => trail.allows(tool.name)),
    call: async (name, args) => {
      trail.toolCalls.push({ tool_name: name, arguments: args });
      if (!trail.allows(name)) {
        trail.blockedReason = `tool "${name}" is not in the mount's tool_allowlist`;
        return { status: 'error', result: null, error: trail.blockedReason };
      }
      return backend.callTool(connection, name, args, remaining());
    },
  };
}
