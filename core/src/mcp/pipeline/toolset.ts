import type { ToolDescriptor } from '@agent-host/sdk';
import type { IntentGateRule } from '../admin/agent-config.js';
import { customCapabilityAllows } from './intent-gates.js';
import type { MountRow } from '../admin/mount-store.js';
import { allowedBy } from './policy.js';
import type { ServerRow } from '../admin/server-store.js';
import type { ResolvedServer } from '../admin/servers.js';
import { sameTool } from '../tracking/tracking.js';

export type UsableMount = MountRow & { server: ServerRow };

/** A tool a turn may call, with the mount whose policy governs it. */
export interface MountedTool {
  descriptor: ToolDescriptor;
  mount: UsableMount;
  server: ResolvedServer;
}

/** What discovery saw of one mount, for `mcp_context`. */
export interface MountDiscovery {
  mount_id: string;
  mcp_server_id: string;
  server_name: string;
  tool_capability: string | null;
  /** Left out by an intent gate rule of its custom capability. */
  gated_out: boolean;
  tools: string[];
  error: string | null;
}

export interface Toolset {
  mounts: MountDiscovery[];
  /** Tools by name, highest-priority mount first; a name offered by two mounts goes to the first. */
  tools: MountedTool[];
}

/** The tool called `name`: that exact name first, else its tracking twin (`query_tracking` and `query_tracking9` are one capability). */
export const findTool = (tools: readonly MountedTool[], name: string): MountedTool | undefined =>
  tools.find((t) => t.descriptor.name === name) ?? tools.find((t) => sameTool(t.descriptor.name, name));

export interface DiscoveryDeps {
  usableMounts(agentId: string): Promise<UsableMount[]>;
  resolve(server: ServerRow): Promise<ResolvedServer>;
}

/**
 * The tools of an agent's active mounts for one turn: custom-capability
 * mounts pass their intent gate first (against the current user message),
 * then each server's `tools/list`, empty names dropped, then the mount's
 * allowlist. A server that fails to list is left out and reported.
 */
export async function discoverTools(
  deps: Pick<DiscoveryDeps, 'resolve'>,
  usableMounts: Promise<UsableMount[]>,
  message: string,
  rules: readonly IntentGateRule[],
  signal: AbortSignal,
): Promise<Toolset> {
  const mounts = await usableMounts;
  const listed = await Promise.all(
    mounts.map(async (mount) => {
      const seen: MountDiscovery = {
        mount_id: mount.id,
        mcp_server_id: mount.mcp_server_id,
        server_name: mount.server_name,
        tool_capability: mount.tool_capability,
        gated_out: false,
        tools: [],
        error: null,
      };
      if (!customCapabilityAllows(mount.tool_capability, rules, message)) return { seen: { ...seen, gated_out: true }, tools: [] };
      try {
        const server = await deps.resolve(mount.server);
        const descriptors = await server.backend.listTools(server.connection, { timeoutMs: mount.timeout_ms, signal });
        const tools = descriptors
          .filter((d) => d.name.trim() !== '' && allowedBy(mount.allowed_tools_json, d.name))
          .map((descriptor) => ({ descriptor, mount, server }));
        return { seen: { ...seen, tools: tools.map((t) => t.descriptor.name) }, tools };
      } catch (error) {
        if (signal.aborted) throw error;
        return { seen: { ...seen, error: (error as Error).message }, tools: [] };
      }
    }),
  );
  const tools: MountedTool[] = [];
  for (const tool of listed.flatMap((l) => l.tools)) if (!tools.some((t) => t.descriptor.name === tool.descriptor.name)) tools.push(tool);
  return { mounts: listed.map((l) => l.seen), tools };
}
