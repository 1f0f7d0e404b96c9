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
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { McpCredentials } from './credentials.js';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { newestFirst } from '../../db/keyset-cursor.js';
import { maskConnectionConfig, pastedCredentials, refuseUnconfirmedRepoint, unmask } from './connection-secrets.js';
import type { ServerCreateInput, ServerUpdateInput } from './schemas.js';
import { TOOL_PROVIDER_TRANSPORT, toolProviderBackend } from '../providers/tool-provider-backend.js';

export interface ServerRow {
  id: string;
  name: string;
  description: string;
  transport_type: string;
  connection_config: Record<string, unknown>;
  credential_schema: Record<string, unknown> | null;
  credential_id: string | null;
  status: 'active' | 'inactive' | 'error';
  last_health_check_at: Date | null;
  last_health_message: string | null;
  created_at: Date;
  updated_at: Date;
}

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

  constructor(
    private readonly db: Sequelize,
    private readonly backends: KeyedRegistry<ToolBackend>,
    private readonly providers: KeyedRegistry<ToolProvider>,
    private readonly credentials: McpCredentials,
    /** `[mcp] sub_admins_manage_stdio_servers`. */
    private readonly subAdminsManageStdio: boolean,
  ) {
    this.providerBackend = toolProviderBackend(providers);
  }

  /**
   * Lists every enabled tool provider as a server of transport `tool_provider`, once: its row is made at the first
   * start with the plugin enabled (named after the provider, or after the provider and its key when an administrator's
   * server has that name) and kept afterwards, so its mounts and audits stay. Instances starting together take turns.
   */
  async listToolProviders(): Promise<{ provider: string; mcp_server_id: string; created: boolean }[]> {
    const listed: { provider: string; mcp_server_id: string; created: boolean }[] = [];
    for (const { key, value: provider } of this.providers.list()) {
      listed.push(
        await this.db.transaction(async (transaction) => {
          await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', { bind: [`tool_provider:${key}`], transaction });
          const [existing] = await this.db.query<{ id: string }>(
            `SELECT id FROM mcp_servers WHERE transport_type = $1 AND connection_config->>'provider' = $2 ORDER BY created_at LIMIT 1`,
            { bind: [TOOL_PROVIDER_TRANSPORT, key], type: QueryTypes.SELECT, transaction },
          );
          if (existing) return { provider: key, mcp_server_id: existing.id, created: false };
          const [taken] = await this.db.query('SELECT 1 FROM mcp_servers WHERE lower(name) = lower($1)', {
            bind: [provider.displayName],
            type: QueryTypes.SELECT,
            transaction,
          });
          const id = randomUUID();
          await this.db.query(
            `INSERT INTO mcp_servers (id, name, description, transport_type, connection_config, status, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'active', now(), now())`,
            {
              bind: [
                id,
                taken ? `${provider.displayName} (${key})` : provider.displayName,
                provider.description ?? '',
                TOOL_PROVIDER_TRANSPORT,
                JSON.stringify({ provider: key }),
              ],
              transaction,
            },
          );
          return { provider: key, mcp_server_id: id, created: true };
        }),
      );
    }
    return listed;
  }

  private backendFor(transport: string): ToolBackend | undefined {
    return transport === TOOL_PROVIDER_TRANSPORT ? this.providerBackend : this.backends.get(transport);
  }

  list(page: { limit: number; cursor?: string }) {
    return newestFirst(this.db, { from: 'mcp_servers', where: 'true', bind: [] }, page, presentServer);
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
    await this.db.transaction(async (transaction) => {
      await this.refuseDuplicateName(input.name, null);
      await this.db.query(
        `INSERT INTO mcp_servers (id, name, description, transport_type, connection_config, credential_schema, credential_id, status, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())`,
        {
          bind: [
            id,
            input.name,
            input.description ?? '',
            input.transport_type,
            JSON.stringify(input.connection_config),
            json(input.credential_schema),
            input.credential_id ?? null,
            input.status ?? 'active',
            op.operator.admin_user_id,
          ],
          transaction,
        },
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
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `UPDATE mcp_servers SET name = $2, description = $3, transport_type = $4, connection_config = $5, credential_schema = $6, credential_id = $7, status = $8, updated_at = now() WHERE id = $1`,
        {
          bind: [
            id,
            next.name,
            next.description,
            next.transport_type,
            JSON.stringify(next.connection_config),
            json(next.credential_schema),
            next.credential_id,
            next.status,
          ],
          transaction,
        },
      );
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
    const mounts = await this.db.query<{ agent_id: string }>('SELECT agent_id FROM agent_mcp_mounts WHERE mcp_server_id = $1 ORDER BY created_at', {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    if (mounts.length)
      throw new ConflictError(`MCP server ${id} is mounted on agent(s) ${mounts.map((m) => m.agent_id).join(', ')}; unmount it first`, {
        code: 'MCP_SERVER_IN_USE',
      });
    await this.db.transaction(async (transaction) => {
      await this.db.query('DELETE FROM mcp_servers WHERE id = $1', { bind: [id], transaction });
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
  async recordHealth(id: string, ok: boolean, message: string, transaction: Transaction): Promise<ServerRow['status']> {
    const [row] = await this.db.query<{ status: ServerRow['status'] }>(
      `UPDATE mcp_servers SET status = CASE WHEN status = 'inactive' THEN status WHEN $2 THEN 'active' ELSE 'error' END,
              last_health_check_at = now(), last_health_message = $3, updated_at = now() WHERE id = $1 RETURNING status`,
      { bind: [id, ok, message], type: QueryTypes.SELECT, transaction },
    );
    return row!.status;
  }

  async find(id: string): Promise<ServerRow> {
    const [row] = await this.db.query<ServerRow>('SELECT * FROM mcp_servers WHERE id = try_uuid($1)', { bind: [id], type: QueryTypes.SELECT });
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
    const [row] = await this.db.query<{ id: string }>('SELECT id FROM mcp_servers WHERE lower(name) = lower($1) AND ($2::text IS NULL OR id::text <> $2)', {
      bind: [name, exceptId],
      type: QueryTypes.SELECT,
    });
    if (row) throw new ConflictError(`an MCP server named "${name}" already exists (${row.id})`, { code: 'MCP_SERVER_EXISTS' });
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

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

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
