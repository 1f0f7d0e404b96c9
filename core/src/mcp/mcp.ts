import type { SecretsService, ToolBackend, ToolProvider } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { SessionEvents } from '../chat/session-events.js';
import { ToolApprovals } from './pipeline/approvals.js';
import { McpCallAudits } from './pipeline/call-audit-store.js';
import { McpCredentials } from './admin/credentials.js';
import { McpMounts } from './admin/mounts.js';
import { McpServerActions } from './admin/server-actions.js';
import { McpServers } from './admin/servers.js';
import type { TurnToolsInput } from './pipeline/tool-turn.js';
import { TurnTools } from './pipeline/turn-tools.js';

export interface McpDeps {
  db: Sequelize;
  config: HostConfig['mcp'];
  secrets: SecretsService;
  backends: KeyedRegistry<ToolBackend>;
  /** Native tools of plugins, each listed as a server of transport `tool_provider`. */
  providers: KeyedRegistry<ToolProvider>;
  /** Held tool calls are announced to the session's room. */
  events: SessionEvents;
}

/** The MCP tools domain (spec 2.7, 4.13): servers, credentials, mounts, administrator actions, call audits, and each turn's tool path. */
export class Mcp {
  readonly servers: McpServers;
  readonly credentials: McpCredentials;
  readonly mounts: McpMounts;
  readonly actions: McpServerActions;
  readonly audits: McpCallAudits;
  readonly approvals: ToolApprovals;

  constructor(readonly deps: McpDeps) {
    this.credentials = new McpCredentials(deps.db, deps.secrets);
    this.servers = new McpServers(deps.db, deps.backends, deps.providers, this.credentials, deps.config.sub_admins_manage_stdio_servers);
    this.mounts = new McpMounts(deps.db);
    this.audits = new McpCallAudits(deps.db);
    this.actions = new McpServerActions(deps.db, this.servers, this.mounts, this.audits);
    this.approvals = new ToolApprovals(deps.db, this.servers, this.audits, deps.events);
  }

  /** The tool path of one chat turn. */
  turnTools(input: TurnToolsInput): TurnTools {
    const discovery = {
      usableMounts: (agentId: string) => this.mounts.usable(agentId),
      resolve: (server: Parameters<McpServers['resolveRow']>[0]) => this.servers.resolveRow(server),
    };
    return new TurnTools({ ...discovery, audits: this.audits, config: this.deps.config, approvals: this.approvals }, input);
  }
}
