import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { mountExposure } from '../../agents/mount-exposure.js';
import { MOUNT_DEFAULTS, type McpMountCreateInput, type McpMountUpdateInput } from './schemas.js';
import type { ServerRow } from './servers.js';

export interface MountRow {
  id: string;
  agent_id: string;
  mcp_server_id: string;
  server_name: string;
  server_status: string;
  allowed_tools_json: string[];
  tool_capability: string | null;
  timeout_ms: number;
  max_calls_per_turn: number;
  priority: number;
  is_active: boolean;
  approval: 'none' | 'operator';
  created_at: Date;
  updated_at: Date;
}

const MOUNT_SELECT = `SELECT m.*, s.name AS server_name, s.status AS server_status FROM agent_mcp_mounts m JOIN mcp_servers s ON s.id = m.mcp_server_id`;

/** Mounts of MCP servers on chat agents, with their policy (spec 2.7, 4.13, 8). */
export class McpMounts {
  constructor(private readonly db: Sequelize) {}

  async list(agentId: string) {
    await this.requireAgent(agentId);
    return { items: (await this.rowsOf(agentId)).map(presentMount) };
  }

  /** Every mount of the agent, highest priority first. */
  async rowsOf(agentId: string): Promise<MountRow[]> {
    return this.db.query<MountRow>(`${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) ORDER BY m.priority DESC, m.created_at, m.id`, {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
  }

  /** The active mounts of active servers: what a turn may use. */
  async usable(agentId: string): Promise<(MountRow & { server: ServerRow })[]> {
    const rows = await this.db.query<MountRow & { server: ServerRow }>(
      `SELECT m.*, s.name AS server_name, s.status AS server_status, to_jsonb(s) AS server FROM agent_mcp_mounts m JOIN mcp_servers s ON s.id = m.mcp_server_id
       WHERE m.agent_id = try_uuid($1) AND m.is_active AND s.status = 'active' ORDER BY m.priority DESC, m.created_at, m.id`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    // to_jsonb turns timestamps into strings; the server row is used for its connection only.
    return rows.map((r) => ({ ...r, server: { ...r.server, created_at: new Date(r.server.created_at), updated_at: new Date(r.server.updated_at) } }));
  }

  async create(agentId: string, input: McpMountCreateInput, op: Operation) {
    await this.requireChatAgent(agentId);
    const [server] = await this.db.query('SELECT 1 FROM mcp_servers WHERE id = $1', { bind: [input.mcp_server_id], type: QueryTypes.SELECT });
    if (!server) throw new ValidationError([{ loc: ['body', 'mcp_server_id'], msg: `MCP server ${input.mcp_server_id} not found`, type: 'value_error' }]);
    const id = randomUUID();
    await this.db.transaction(async (transaction) => {
      const inserted = await this.db.query(
        `INSERT INTO agent_mcp_mounts (id, agent_id, mcp_server_id, allowed_tools_json, tool_capability, timeout_ms, max_calls_per_turn, priority, is_active, created_by, approval, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), now()) ON CONFLICT (agent_id, mcp_server_id) DO NOTHING RETURNING id`,
        {
          bind: [
            id,
            agentId,
            input.mcp_server_id,
            JSON.stringify(input.allowed_tools ?? []),
            input.tool_capability ?? null,
            input.timeout_ms ?? MOUNT_DEFAULTS.timeout_ms,
            input.max_calls_per_turn ?? MOUNT_DEFAULTS.max_calls_per_turn,
            input.priority ?? MOUNT_DEFAULTS.priority,
            input.is_active ?? true,
            op.operator.admin_user_id,
            input.approval ?? 'none',
          ],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      if (!inserted.length)
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
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `UPDATE agent_mcp_mounts SET allowed_tools_json = $2, tool_capability = $3, timeout_ms = $4, max_calls_per_turn = $5, priority = $6, is_active = $7, approval = $8, updated_at = now() WHERE id = $1`,
        {
          bind: [
            mountId,
            JSON.stringify(allowed),
            input.tool_capability !== undefined ? input.tool_capability : current.tool_capability,
            input.timeout_ms ?? current.timeout_ms,
            input.max_calls_per_turn ?? current.max_calls_per_turn,
            input.priority ?? current.priority,
            input.is_active ?? current.is_active,
            input.approval ?? current.approval,
          ],
          transaction,
        },
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
    await this.db.transaction(async (transaction) => {
      await this.db.query('DELETE FROM agent_mcp_mounts WHERE id = $1', { bind: [mountId], transaction });
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
    const [row] = await this.db.query<MountRow>(`${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) AND m.id = try_uuid($2)`, {
      bind: [agentId, mountId],
      type: QueryTypes.SELECT,
    });
    if (!row) throw new NotFoundError(`agent ${agentId} has no MCP mount ${mountId}`, { code: 'MOUNT_NOT_FOUND' });
    return row;
  }

  /** MCP tools serve chat agents only (spec 4.2 rule 2). */
  async requireChatAgent(agentId: string): Promise<void> {
    const type = await this.requireAgent(agentId);
    if (type !== 'chat') throw new ConflictError(`agent ${agentId} is a ${type} agent; MCP tools serve chat agents only`, { code: 'AGENT_TYPE_UNSUPPORTED' });
  }

  private async requireAgent(agentId: string): Promise<string> {
    const [row] = await this.db.query<{ agent_type: string }>('SELECT agent_type FROM agents WHERE id = try_uuid($1)', {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
    if (!row) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
    return row.agent_type;
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
