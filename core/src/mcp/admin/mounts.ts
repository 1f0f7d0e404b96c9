import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { mountExposure } from '../../agents/mount-exposure.js';
import { MOUNT_DEFAULTS, type McpMountCreateInput, type McpMountUpdateInput } from './schemas.js';
import type { ServerRow } from './server-store.js';
import { MountStore, type MountRow } from './mount-store.js';
import { runtimeConfigCache } from '../../db/runtime-config-cache.js';

/** Mounts of MCP servers on chat agents, with their policy (spec 2.7, 4.13, 8). */
export class McpMounts {
  private readonly store: MountStore;

  constructor(
    /** For the audit rows each write commits with, and the agent's mount exposure they record. */
    private readonly db: Sequelize,
  ) {
    this.store = new MountStore(db);
  }

  async list(agentId: string) {
    await this.requireAgent(agentId);
    return { items: (await this.rowsOf(agentId)).map(presentMount) };
  }

  /** Every mount of the agent, highest priority first. */
  rowsOf(agentId: string): Promise<MountRow[]> {
    return this.store.ofAgent(agentId);
  }

  /** The active mounts of active servers: what a turn may use. */
  usable(agentId: string): Promise<(MountRow & { server: ServerRow })[]> {
    return runtimeConfigCache(this.db).read(`mcp-mounts:${agentId}`, () => this.store.usable(agentId));
  }

  async create(agentId: string, input: McpMountCreateInput, op: Operation) {
    await this.requireChatAgent(agentId);
    if (!(await this.store.serverExists(input.mcp_server_id)))
      throw new ValidationError([{ loc: ['body', 'mcp_server_id'], msg: `MCP server ${input.mcp_server_id} not found`, type: 'value_error' }]);
    const id = randomUUID();
    await this.store.transaction(async (transaction) => {
      const inserted = await this.store.insert(
        {
          id,
          agent_id: agentId,
          mcp_server_id: input.mcp_server_id,
          allowed_tools_json: input.allowed_tools ?? [],
          tool_capability: input.tool_capability ?? null,
          timeout_ms: input.timeout_ms ?? MOUNT_DEFAULTS.timeout_ms,
          max_calls_per_turn: input.max_calls_per_turn ?? MOUNT_DEFAULTS.max_calls_per_turn,
          priority: input.priority ?? MOUNT_DEFAULTS.priority,
          is_active: input.is_active ?? true,
          approval: input.approval ?? 'none',
        },
        op.operator.admin_user_id,
        transaction,
      );
      if (!inserted)
        throw new ConflictError(`MCP server ${input.mcp_server_id} is already mounted on agent ${agentId}; change that mount instead`, {
          code: 'MOUNT_EXISTS',
        });
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        {
          action: 'mcp.mount.create',
          target_type: 'agent',
          target_id: agentId,
          payload: { mount_id: id, mcp_server_id: input.mcp_server_id, ...(await mountExposure(this.db, agentId, transaction)) },
        },
        transaction,
      );
    });
    return presentMount(await this.find(agentId, id));
  }

  async update(agentId: string, mountId: string, input: McpMountUpdateInput, op: Operation) {
    const current = await this.find(agentId, mountId);
    const allowed = input.allowed_tools !== undefined ? (input.allowed_tools ?? []) : current.allowed_tools_json;
    await this.store.transaction(async (transaction) => {
      await this.store.update(
        mountId,
        {
          allowed_tools_json: allowed,
          tool_capability: input.tool_capability !== undefined ? input.tool_capability : current.tool_capability,
          timeout_ms: input.timeout_ms ?? current.timeout_ms,
          max_calls_per_turn: input.max_calls_per_turn ?? current.max_calls_per_turn,
          priority: input.priority ?? current.priority,
          is_active: input.is_active ?? current.is_active,
          approval: input.approval ?? current.approval,
        },
        transaction,
      );
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.mount.update', target_type: 'agent', target_id: agentId, payload: { mount_id: mountId, changed: Object.keys(input) } },
        transaction,
      );
    });
    return presentMount(await this.find(agentId, mountId));
  }

  async delete(agentId: string, mountId: string, op: Operation) {
    const mount = await this.find(agentId, mountId);
    await this.store.transaction(async (transaction) => {
      await this.store.delete(mountId, transaction);
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.mount.delete', target_type: 'agent', target_id: agentId, payload: { mount_id: mountId, mcp_server_id: mount.mcp_server_id } },
        transaction,
      );
    });
    return { status: 'deleted', mount_id: mountId, mcp_server_id: mount.mcp_server_id };
  }

  async find(agentId: string, mountId: string): Promise<MountRow> {
    const row = await this.store.find(agentId, mountId);
    if (!row) throw new NotFoundError(`agent ${agentId} has no MCP mount ${mountId}`, { code: 'MOUNT_NOT_FOUND' });
    return row;
  }

  /** MCP tools serve chat agents only (spec 4.2 rule 2). */
  async requireChatAgent(agentId: string): Promise<void> {
    const type = await this.requireAgent(agentId);
    if (type !== 'chat') throw new ConflictError(`agent ${agentId} is a ${type} agent; MCP tools serve chat agents only`, { code: 'AGENT_TYPE_UNSUPPORTED' });
  }

  private async requireAgent(agentId: string): Promise<string> {
    const type = await this.store.agentType(agentId);
    if (type === undefined) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
    return type;
  }
}

export function presentMount(row: MountRow) {
  return {
    mount_id: row.id,
    agent_id: row.agent_id,
    mcp_server_id: row.mcp_server_id,
    server_name: row.server_name,
    server_status: row.server_status,
    allowed_tools: row.allowed_tools_json,
    tool_capability: row.tool_capability,
    timeout_ms: row.timeout_ms,
    max_calls_per_turn: row.max_calls_per_turn,
    priority: row.priority,
    is_active: row.is_active,
    approval: row.approval,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
