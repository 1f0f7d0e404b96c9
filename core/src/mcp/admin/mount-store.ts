import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../../db/sql-store.js';
import type { ServerRow } from './server-store.js';

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

/** The policy an administrator writes on a mount. */
export type MountPolicy = Pick<
  MountRow,
  'allowed_tools_json' | 'tool_capability' | 'timeout_ms' | 'max_calls_per_turn' | 'priority' | 'is_active' | 'approval'
>;

const MOUNT_SELECT = `SELECT m.*, s.name AS server_name, s.status AS server_status FROM agent_mcp_mounts m JOIN mcp_servers s ON s.id = m.mcp_server_id`;

/** The SQL of tool server mounts: the `agent_mcp_mounts` table, read with each mount's server. */
export class MountStore extends SqlStore {
  /** The agent's type, or `undefined` for an unknown agent. */
  async agentType(agentId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ agent_type: string }>('SELECT agent_type FROM agents WHERE id = try_uuid($1)', {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
    return row?.agent_type;
  }

  async serverExists(serverId: string): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM mcp_servers WHERE id = $1', { bind: [serverId], type: QueryTypes.SELECT });
    return row !== undefined;
  }

  /** Every mount of the agent, highest priority first. */
  ofAgent(agentId: string): Promise<MountRow[]> {
    return this.db.query<MountRow>(`${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) ORDER BY m.priority DESC, m.created_at, m.id`, {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
  }

  /** The active mounts of active servers, each with its server row, highest priority first. */
  async usable(agentId: string): Promise<(MountRow & { server: ServerRow })[]> {
    const rows = await this.db.query<MountRow & { server: ServerRow }>(
      `SELECT m.*, s.name AS server_name, s.status AS server_status, to_jsonb(s) AS server FROM agent_mcp_mounts m JOIN mcp_servers s ON s.id = m.mcp_server_id
       WHERE m.agent_id = try_uuid($1) AND m.is_active AND s.status = 'active' ORDER BY m.priority DESC, m.created_at, m.id`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    // to_jsonb turns timestamps into strings; the server row is used for its connection only.
    return rows.map((r) => ({ ...r, server: { ...r.server, created_at: new Date(r.server.created_at), updated_at: new Date(r.server.updated_at) } }));
  }

  async find(agentId: string, mountId: string): Promise<MountRow | undefined> {
    const [row] = await this.db.query<MountRow>(`${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) AND m.id = try_uuid($2)`, {
      bind: [agentId, mountId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  /** Inserts the mount unless the server is already mounted on the agent; resolves with whether it did. */
  async insert(mount: MountPolicy & Pick<MountRow, 'id' | 'agent_id' | 'mcp_server_id'>, createdBy: string | null, transaction: Transaction): Promise<boolean> {
    this.runtimeConfigChanged(transaction);
    const inserted = await this.db.query(
      `INSERT INTO agent_mcp_mounts (id, agent_id, mcp_server_id, allowed_tools_json, tool_capability, timeout_ms, max_calls_per_turn, priority, is_active, created_by, approval, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), now()) ON CONFLICT (agent_id, mcp_server_id) DO NOTHING RETURNING id`,
      {
        bind: [
          mount.id,
          mount.agent_id,
          mount.mcp_server_id,
          JSON.stringify(mount.allowed_tools_json),
          mount.tool_capability,
          mount.timeout_ms,
          mount.max_calls_per_turn,
          mount.priority,
          mount.is_active,
          createdBy,
          mount.approval,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return inserted.length > 0;
  }

  async update(mountId: string, policy: MountPolicy, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `UPDATE agent_mcp_mounts SET allowed_tools_json = $2, tool_capability = $3, timeout_ms = $4, max_calls_per_turn = $5, priority = $6, is_active = $7, approval = $8, updated_at = now() WHERE id = $1`,
      {
        bind: [
          mountId,
          JSON.stringify(policy.allowed_tools_json),
          policy.tool_capability,
          policy.timeout_ms,
          policy.max_calls_per_turn,
          policy.priority,
          policy.is_active,
          policy.approval,
        ],
        transaction,
      },
    );
  }

  async delete(mountId: string, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('DELETE FROM agent_mcp_mounts WHERE id = $1', { bind: [mountId], transaction });
  }
}
