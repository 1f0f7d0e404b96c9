import { randomUUID } from 'node:crypto';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
  type ToolBackend,
  type ToolProvider,
  type ToolServerConnection,
  type ValidationIssue,
} from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { McpCredentials } from './credentials.js';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { maskConnectionConfig, pastedCredentials, refuseUnconfirmedRepoint, unmask } from './connection-secrets.js';
import type { ServerCreateInput, ServerUpdateInput } from './schemas.js';
import { TOOL_PROVIDER_TRANSPORT, toolProviderBackend } from '../providers/tool-provider-backend.js';
import { ServerStore, type ServerRow } from './server-store.js';

/** A server ready for its backend: the connection with its decrypted secret, and the values to mask. */
export interface ResolvedServer {
  row: ServerRow;
  backend: ToolBackend;
  connection: ToolServerConnection;
  secretValues: string[];
}

/**
 * MCP servers (spec 2.7, 4.13). `transport_type` is a key of the tool
 * backend registry (plugins contribute them), and `connection_config` is
 * checked by that backend before it is stored.
 */
export class McpServers {
  private readonly providerBackend: ToolBackend;
  private readonly store: ServerStore;

  constructor(
    /** For the audit rows each write commits with. */
    private readonly db: Sequelize,
    private readonly backends: KeyedRegistry<ToolBackend>,
    private readonly providers: KeyedRegistry<ToolProvider>,
    private readonly credentials: McpCredentials,
    /** `[mcp] sub_admins_manage_stdio_servers`. */
    private readonly subAdminsManageStdio: boolean,
  ) {
    this.providerBackend = toolProviderBackend(providers);
    this.store = new ServerStore(db);
  }

  /**
   * Lists every enabled tool provider as a server of transport `tool_provider`, once: its row is made at the first
   * start with the plugin enabled (named after the provider, or after the provider and its key when an administrator's
   * server has that name) and kept afterwards, so its mounts and audits stay. Instances starting together take turns.
   */
  async listToolProviders(): Promise<{ provider: string; mcp_server_id: string; created: boolean }[]> {
    const listed: { provider: string; mcp_server_id: string; created: boolean }[] = [];
    for (const { key, value: provider } of this.providers.list()) {
      const { id, created } = await this.store.ensureProviderServer(TOOL_PROVIDER_TRANSPORT, {
        key,
        name: provider.displayName,
        fallbackName: `${provider.displayName} (${key})`,
        description: provider.description ?? '',
      });
      listed.push({ provider: key, mcp_server_id: id, created });
    }
    return listed;
  }

  private backendFor(transport: string): ToolBackend | undefined {
    return transport === TOOL_PROVIDER_TRANSPORT ? this.providerBackend : this.backends.get(transport);
  }

  list(page: { limit: number; cursor?: string }) {
    return this.store.page(page, presentServer);
  }

  async get(id: string) {
    return presentServer(await this.find(id));
  }

  async create(input: ServerCreateInput, op: Operation) {
    if (input.transport_type === TOOL_PROVIDER_TRANSPORT) throw providerServerRefusal();
    await this.refuseStdioBySubAdmin(input.transport_type, op, 'mcp.server.create', null);
    this.validateTransport(input.transport_type, input.connection_config);
    const id = randomUUID();
    if (input.credential_id) await this.credentials.checkAttachable(input.credential_id, id, input.connection_config);
    await this.store.transaction(async (transaction) => {
      await this.refuseDuplicateName(input.name, null);
      await this.store.insert(
        id,
        {
          name: input.name,
          description: input.description ?? '',
          transport_type: input.transport_type,
          connection_config: input.connection_config,
          credential_schema: input.credential_schema ?? null,
          credential_id: input.credential_id ?? null,
          status: input.status ?? 'active',
        },
        op.operator.admin_user_id,
        transaction,
      );
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.server.create', target_type: 'mcp_server', target_id: id, payload: { name: input.name, transport_type: input.transport_type } },
        transaction,
      );
    });
    return this.get(id);
  }

  async update(id: string, body: ServerUpdateInput, op: Operation) {
    const { confirm_credential: confirmed, ...input } = body;
    const current = await this.find(id);
    const next = { ...current, ...input };
    const repointed = input.transport_type !== undefined || input.connection_config !== undefined;
    if (repointed && (current.transport_type === TOOL_PROVIDER_TRANSPORT || next.transport_type === TOOL_PROVIDER_TRANSPORT)) throw providerServerRefusal();
    if (input.connection_config) next.connection_config = unmask(input.connection_config, current.connection_config);
    if (input.transport_type !== undefined || input.connection_config !== undefined) {
      await this.refuseStdioBySubAdmin(current.transport_type, op, 'mcp.server.update', id);
      await this.refuseStdioBySubAdmin(next.transport_type, op, 'mcp.server.update', id);
    }
    if (input.transport_type !== undefined || input.connection_config !== undefined) this.validateTransport(next.transport_type, next.connection_config);
    refuseUnconfirmedRepoint({
      name: current.name,
      credentialId: next.credential_id,
      before: current.connection_config,
      after: next.connection_config,
      confirmed: confirmed === true || input.credential_id !== undefined,
    });
    if (next.credential_id && (input.credential_id || input.connection_config))
      await this.credentials.checkAttachable(next.credential_id, id, next.connection_config);
    if (input.name !== undefined) await this.refuseDuplicateName(input.name, id);
    await this.store.transaction(async (transaction) => {
      await this.store.update(id, next, transaction);
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.server.update', target_type: 'mcp_server', target_id: id, payload: { changed: Object.keys(input) } },
        transaction,
      );
    });
    return this.get(id);
  }

  async delete(id: string, op: Operation) {
    await this.find(id);
    const mounts = await this.store.mountingAgents(id);
    if (mounts.length)
      throw new ConflictError(`MCP server ${id} is mounted on agent(s) ${mounts.join(', ')}; unmount it first`, {
        code: 'MCP_SERVER_IN_USE',
      });
    await this.store.transaction(async (transaction) => {
      await this.store.delete(id, transaction);
      await auditOperation(this.db, 'core.mcp', op, { action: 'mcp.server.delete', target_type: 'mcp_server', target_id: id }, transaction);
    });
    return { status: 'deleted', mcp_server_id: id };
  }

  /** The server with its backend and decrypted credential (`credentialId` overrides the attached one, within its scope). */
  async resolve(id: string, credentialId?: string): Promise<ResolvedServer> {
    const row = await this.find(id);
    return this.resolveRow(row, credentialId);
  }

  async resolveRow(row: ServerRow, credentialId?: string): Promise<ResolvedServer> {
    const backend = this.backendFor(row.transport_type);
    if (!backend)
      throw new ConflictError(`MCP server "${row.name}" uses transport_type "${row.transport_type}", which no enabled plugin provides`, {
        code: 'MCP_TRANSPORT_UNAVAILABLE',
      });
    const chosen = credentialId ?? row.credential_id;
    const secret = chosen ? await this.credentials.secretFor(chosen, row) : null;
    return {
      row,
      backend,
      connection: { server_id: row.id, transport_type: row.transport_type, connection_config: row.connection_config, secret },
      secretValues: secret ? Object.values(secret) : [],
    };
  }

  /** Records a health check's result: a passing check makes an `error` server `active` again; an `inactive` one stays so. */
  recordHealth(id: string, ok: boolean, message: string, transaction: Transaction): Promise<ServerRow['status']> {
    return this.store.recordHealth(id, ok, message, transaction);
  }

  async find(id: string): Promise<ServerRow> {
    const row = await this.store.find(id);
    if (!row) throw new NotFoundError(`MCP server ${id} not found`, { code: 'MCP_SERVER_NOT_FOUND' });
    return row;
  }

  /** A server of a backend that launches processes is a program the host runs: by default only super admins define one. */
  private async refuseStdioBySubAdmin(transport: string, op: Operation, action: string, targetId: string | null): Promise<void> {
    if (!this.backendFor(transport)?.launchesProcesses || this.subAdminsManageStdio || op.operator.role_code === 'super_admin') return;
    await auditOperation(this.db, 'core.mcp', op, {
      action,
      outcome: 'failure',
      target_type: 'mcp_server',
      target_id: targetId ?? 'new',
      payload: { reason: 'stdio_needs_super_admin' },
    });
    throw new ForbiddenError(
      'on this host only super admins create or change stdio MCP servers, which run programs on the host ([mcp] sub_admins_manage_stdio_servers)',
      { code: 'SUPER_ADMIN_REQUIRED' },
    );
  }

  private validateTransport(transport: string, config: Record<string, unknown>): void {
    const backend = this.backendFor(transport);
    if (!backend) {
      const known =
        this.backends
          .list()
          .map((b) => `"${b.key}"`)
          .join(', ') || 'none (enable a tool backend plugin)';
      throw new ValidationError([{ loc: ['body', 'transport_type'], msg: `unknown transport_type "${transport}"; registered: ${known}`, type: 'value_error' }]);
    }
    const issues: ValidationIssue[] = [...backend.validateConfig(config), ...pastedCredentials(config)];
    if (issues.length) throw new ValidationError(issues.map((issue) => ({ ...issue, loc: ['body', ...issue.loc] })));
  }

  private async refuseDuplicateName(name: string, exceptId: string | null): Promise<void> {
    const row = await this.store.named(name, exceptId);
    if (row) throw new ConflictError(`an MCP server named "${name}" already exists (${row})`, { code: 'MCP_SERVER_EXISTS' });
  }
}

/** Servers of tool providers come and go with their plugins; an administrator mounts them but does not define them. */
const providerServerRefusal = () =>
  new ValidationError([
    {
      loc: ['body', 'transport_type'],
      msg: `"${TOOL_PROVIDER_TRANSPORT}" servers are listed by the host, one per enabled tool provider plugin; mount the one GET /mcp-servers shows`,
      type: 'value_error',
    },
  ]);

export function presentServer(row: ServerRow) {
  return {
    mcp_server_id: row.id,
    name: row.name,
    description: row.description,
    transport_type: row.transport_type,
    connection_config: maskConnectionConfig(row.connection_config),
    credential_schema: row.credential_schema,
    credential_id: row.credential_id,
    status: row.status,
    last_health_check_at: row.last_health_check_at?.toISOString() ?? null,
    last_health_message: row.last_health_message,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
