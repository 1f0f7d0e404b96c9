import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';

export interface MountRow {
  id: string;
  agent_id: string;
  skill_id: string;
  skill_version_id: string;
  is_active: boolean;
  priority: number;
  timeout_ms: number;
  max_calls_per_turn: number;
  tool_allowlist: string[];
  created_at: Date;
  updated_at: Date;
}

/** A mount as a turn runs it: the policy with its skill and released version. */
export interface RunnableSkill extends MountRow {
  skill_name: string;
  skill_description: string;
  version_number: number;
  backend_type: string;
  backend_ref_id: string | null;
  config: Record<string, unknown>;
}

export type MountPolicy = Pick<MountRow, 'skill_version_id' | 'is_active' | 'priority' | 'timeout_ms' | 'max_calls_per_turn' | 'tool_allowlist'>;

const MOUNT_SELECT = `SELECT m.*, s.name AS skill_name, s.description AS skill_description, v.version_number, v.backend_type, v.backend_ref_id, v.config
  FROM agent_skill_mounts m JOIN skills s ON s.id = m.skill_id JOIN skill_versions v ON v.id = m.skill_version_id`;

/** The SQL of skill mounts: the `agent_skill_mounts` table, read with each mount's skill and version. */
export class SkillMountStore extends SqlStore {
  /** The agent's mounts, highest priority first; only those a turn runs (active, of an active skill) with `runnableOnly`. */
  ofAgent(agentId: string, runnableOnly: boolean): Promise<RunnableSkill[]> {
    return this.db.query<RunnableSkill>(
      `${MOUNT_SELECT} WHERE m.agent_id = $1${runnableOnly ? " AND m.is_active AND s.status = 'active'" : ''} ORDER BY m.priority DESC, m.created_at, m.id`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
  }

  async runnable(agentId: string, mountId: string): Promise<RunnableSkill | undefined> {
    const [row] = await this.db.query<RunnableSkill>(`${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) AND m.id = try_uuid($2)`, {
      bind: [agentId, mountId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  /** The mount, locked for the transaction. */
  async lock(agentId: string, mountId: string, transaction: Transaction): Promise<MountRow | undefined> {
    const [row] = await this.db.query<MountRow>('SELECT * FROM agent_skill_mounts WHERE agent_id = try_uuid($1) AND id = try_uuid($2) FOR UPDATE', {
      bind: [agentId, mountId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  async insert(mount: MountPolicy & Pick<MountRow, 'id' | 'agent_id' | 'skill_id'>, createdBy: string | null, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `INSERT INTO agent_skill_mounts (id, agent_id, skill_id, skill_version_id, is_active, priority, timeout_ms, max_calls_per_turn, tool_allowlist, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), now())`,
      {
        bind: [
          mount.id,
          mount.agent_id,
          mount.skill_id,
          mount.skill_version_id,
          mount.is_active,
          mount.priority,
          mount.timeout_ms,
          mount.max_calls_per_turn,
          JSON.stringify(mount.tool_allowlist),
          createdBy,
        ],
        transaction,
      },
    );
  }

  async update(mountId: string, policy: MountPolicy, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `UPDATE agent_skill_mounts SET skill_version_id = $2, is_active = $3, priority = $4, timeout_ms = $5, max_calls_per_turn = $6, tool_allowlist = $7, updated_at = now() WHERE id = $1`,
      {
        bind: [
          mountId,
          policy.skill_version_id,
          policy.is_active,
          policy.priority,
          policy.timeout_ms,
          policy.max_calls_per_turn,
          JSON.stringify(policy.tool_allowlist),
        ],
        transaction,
      },
    );
  }

  async delete(mountId: string, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('DELETE FROM agent_skill_mounts WHERE id = $1', { bind: [mountId], transaction });
  }
}
