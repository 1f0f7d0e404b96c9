import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import { QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { MOUNT_DEFAULTS } from '../mcp/admin/schemas.js';
import { requireActiveServer } from './backend-checks.js';
import type { SkillMcpServers } from './mcp-servers.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { mountExposure } from '../agents/mount-exposure.js';
import type { SkillAssets } from './skill-assets.js';
import type { SkillVersions, VersionRow } from './skill-versions.js';

/** Mount policy (spec 2.8, 8), with the defaults and allowlist rule of MCP mounts so both kinds read alike. */
const policyFields = {
  is_active: z.boolean(),
  priority: z.number().int().min(-1000).max(1000),
  timeout_ms: z.number().int().min(100).max(600_000),
  max_calls_per_turn: z.number().int().min(1).max(100),
  /** Tools of the skill's server the skill may call; empty or `null`: every tool. */
  tool_allowlist: z
    .array(z.string().trim().min(1).max(200))
    .max(500)
    .nullable()
    .transform((names) => [...new Set(names ?? [])]),
};
const DEFAULT_POLICY = { is_active: true, tool_allowlist: [] as string[], ...MOUNT_DEFAULTS };

export const skillMountCreateSchema = z
  .object({ skill_version_id: z.string().uuid(), ...policyFields })
  .partial()
  .required({ skill_version_id: true })
  .strict();
export const skillMountUpdateSchema = z
  .object({ skill_version_id: z.string().uuid(), ...policyFields })
  .partial()
  .strict();
export type SkillMountCreateInput = z.output<typeof skillMountCreateSchema>;
export type SkillMountUpdateInput = z.output<typeof skillMountUpdateSchema>;

interface MountRow {
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

const MOUNT_SELECT = `SELECT m.*, s.name AS skill_name, s.description AS skill_description, v.version_number, v.backend_type, v.backend_ref_id, v.config
  FROM agent_skill_mounts m JOIN skills s ON s.id = m.skill_id JOIN skill_versions v ON v.id = m.skill_version_id`;

/**
 * Skill mounts on agents (spec 4.12): only released versions are mounted
 * (409), an `mcp` version only while its server is active (409), and a skill
 * once per agent, so its name is unambiguous there.
 */
export class SkillMounts {
  constructor(
    private readonly db: Sequelize,
    private readonly assets: SkillAssets,
    private readonly versions: SkillVersions,
    private readonly servers: SkillMcpServers,
  ) {}

  async list(agentId: string) {
    await this.requireAgent(agentId);
    const rows = await this.db.query<RunnableSkill>(`${MOUNT_SELECT} WHERE m.agent_id = $1 ORDER BY m.priority DESC, m.created_at, m.id`, {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
    return { items: rows.map(presentMount) };
  }

  /** The mounts a turn runs, highest priority first: active, of an active skill (their versions are released by construction). */
  runnable(agentId: string): Promise<RunnableSkill[]> {
    return this.db.query<RunnableSkill>(
      `${MOUNT_SELECT} WHERE m.agent_id = $1 AND m.is_active AND s.status = 'active' ORDER BY m.priority DESC, m.created_at, m.id`,
      {
        bind: [agentId],
        type: QueryTypes.SELECT,
      },
    );
  }

  async create(agentId: string, input: SkillMountCreateInput, op: Operation) {
    await this.requireAgent(agentId);
    const policy = { ...DEFAULT_POLICY, ...input };
    const id = randomUUID();
    try {
      await this.db.transaction(async (transaction) => {
        const version = await this.mountableVersion(input.skill_version_id, transaction);
        await requireActiveServer(this.servers, version, 'mounted');
        await this.db.query(
          `INSERT INTO agent_skill_mounts (id, agent_id, skill_id, skill_version_id, is_active, priority, timeout_ms, max_calls_per_turn, tool_allowlist, created_by, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), now())`,
          {
            bind: [
              id,
              agentId,
              version.skill_id,
              version.id,
              policy.is_active,
              policy.priority,
              policy.timeout_ms,
              policy.max_calls_per_turn,
              JSON.stringify(policy.tool_allowlist),
              op.operator.admin_user_id,
            ],
            transaction,
          },
        );
        await auditOperation(
          this.db,
          'core.skills',
          op,
          {
            action: 'skill_mount.create',
            target_type: 'agent',
            target_id: agentId,
            payload: { mount_id: id, skill_id: version.skill_id, skill_version_id: version.id, ...(await mountExposure(this.db, agentId, transaction)) },
          },
          transaction,
        );
      });
    } catch (error) {
      if (error instanceof UniqueConstraintError)
        throw new ConflictError(`this skill is already mounted on agent ${agentId}; change that mount's skill_version_id instead`, { code: 'MOUNT_EXISTS' });
      throw error;
    }
    return this.get(agentId, id);
  }

  /** Changes the policy or the version; a new version, or switching a mount on, passes the mount checks again. */
  async update(agentId: string, mountId: string, input: SkillMountUpdateInput, op: Operation) {
    await this.db.transaction(async (transaction) => {
      const current = await this.find(agentId, mountId, transaction);
      const versionId = input.skill_version_id ?? current.skill_version_id;
      if (versionId !== current.skill_version_id || (input.is_active && !current.is_active)) {
        const version = await this.mountableVersion(versionId, transaction);
        if (version.skill_id !== current.skill_id) {
          throw new ValidationError([
            { loc: ['body', 'skill_version_id'], msg: `must be a version of the mounted skill ${current.skill_id}`, type: 'other_skill' },
          ]);
        }
        await requireActiveServer(this.servers, version, 'mounted');
      }
      const next = { ...current, ...input, skill_version_id: versionId };
      await this.db.query(
        `UPDATE agent_skill_mounts SET skill_version_id = $2, is_active = $3, priority = $4, timeout_ms = $5, max_calls_per_turn = $6, tool_allowlist = $7, updated_at = now() WHERE id = $1`,
        {
          bind: [mountId, next.skill_version_id, next.is_active, next.priority, next.timeout_ms, next.max_calls_per_turn, JSON.stringify(next.tool_allowlist)],
          transaction,
        },
      );
      await auditOperation(
        this.db,
        'core.skills',
        op,
        { action: 'skill_mount.update', target_type: 'agent', target_id: agentId, payload: { mount_id: mountId, changed: Object.keys(input) } },
        transaction,
      );
    });
    return this.get(agentId, mountId);
  }

  async delete(agentId: string, mountId: string, op: Operation) {
    await this.db.transaction(async (transaction) => {
      const mount = await this.find(agentId, mountId, transaction);
      await this.db.query('DELETE FROM agent_skill_mounts WHERE id = $1', { bind: [mountId], transaction });
      await auditOperation(
        this.db,
        'core.skills',
        op,
        { action: 'skill_mount.delete', target_type: 'agent', target_id: agentId, payload: { mount_id: mountId, skill_id: mount.skill_id } },
        transaction,
      );
    });
    return { status: 'deleted', mount_id: mountId };
  }

  private async get(agentId: string, mountId: string) {
    const [row] = await this.db.query<RunnableSkill>(`${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) AND m.id = try_uuid($2)`, {
      bind: [agentId, mountId],
      type: QueryTypes.SELECT,
    });
    if (!row) throw new NotFoundError(`agent ${agentId} has no skill mount ${mountId}`, { code: 'MOUNT_NOT_FOUND' });
    return presentMount(row);
  }

  private async find(agentId: string, mountId: string, transaction: Transaction): Promise<MountRow> {
    const [row] = await this.db.query<MountRow>('SELECT * FROM agent_skill_mounts WHERE agent_id = try_uuid($1) AND id = try_uuid($2) FOR UPDATE', {
      bind: [agentId, mountId],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!row) throw new NotFoundError(`agent ${agentId} has no skill mount ${mountId}`, { code: 'MOUNT_NOT_FOUND' });
    return row;
  }

  /** A released version of an active skill, else 409 (spec 7). */
  private async mountableVersion(versionId: string, transaction: Transaction): Promise<VersionRow> {
    const version = await this.versions.findById(versionId, transaction);
    if (!version.is_released)
      throw new ConflictError(`skill version ${versionId} is not released; release it before mounting it`, { code: 'SKILL_VERSION_NOT_RELEASED' });
    const skill = await this.assets.find(version.skill_id);
    if (skill.status !== 'active') throw new ConflictError(`skill ${skill.id} is ${skill.status}; only active skills are mounted`, { code: 'SKILL_INACTIVE' });
    return version;
  }

  private async requireAgent(agentId: string): Promise<void> {
    const [row] = await this.db.query('SELECT 1 FROM agents WHERE id = try_uuid($1)', { bind: [agentId], type: QueryTypes.SELECT });
    if (!row) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
  }
}

function presentMount(row: RunnableSkill) {
  return {
    mount_id: row.id,
    agent_id: row.agent_id,
    skill_id: row.skill_id,
    skill_name: row.skill_name,
    skill_version_id: row.skill_version_id,
    version_number: row.version_number,
    backend_type: row.backend_type,
    is_active: row.is_active,
    priority: row.priority,
    timeout_ms: row.timeout_ms,
    max_calls_per_turn: row.max_calls_per_turn,
    tool_allowlist: row.tool_allowlist,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
