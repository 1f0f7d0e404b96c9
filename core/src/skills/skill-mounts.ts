import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import { UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { MOUNT_DEFAULTS } from '../mcp/admin/schemas.js';
import { requireActiveServer } from './backend-checks.js';
import type { SkillMcpServers } from './mcp-servers.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { AgentStore } from '../agents/agent-store.js';
import { mountExposure } from '../agents/mount-exposure.js';
import type { SkillAssets } from './skill-assets.js';
import type { SkillVersions } from './skill-versions.js';
import type { VersionRow } from './skill-store.js';
import { SkillMountStore, type MountRow, type RunnableSkill } from './skill-mount-store.js';
import { runtimeConfigCache } from '../db/runtime-config-cache.js';

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

/**
 * Skill mounts on agents (spec 4.12): only released versions are mounted
 * (409), an `mcp` version only while its server is active (409), and a skill
 * once per agent, so its name is unambiguous there.
 */
export class SkillMounts {
  private readonly store: SkillMountStore;
  private readonly agents: AgentStore;

  constructor(
    /** For the audit rows each write commits with, and the agent's mount exposure they record. */
    private readonly db: Sequelize,
    private readonly assets: SkillAssets,
    private readonly versions: SkillVersions,
    private readonly servers: SkillMcpServers,
  ) {
    this.store = new SkillMountStore(db);
    this.agents = new AgentStore(db);
  }

  async list(agentId: string) {
    await this.requireAgent(agentId);
    return { items: (await this.store.ofAgent(agentId, false)).map(presentMount) };
  }

  /** The mounts a turn runs, highest priority first: active, of an active skill (their versions are released by construction). */
  runnable(agentId: string): Promise<RunnableSkill[]> {
    return runtimeConfigCache(this.db).read(`skill-mounts:${agentId}`, () => this.store.ofAgent(agentId, true));
  }

  async create(agentId: string, input: SkillMountCreateInput, op: Operation) {
    await this.requireAgent(agentId);
    const policy = { ...DEFAULT_POLICY, ...input };
    const id = randomUUID();
    try {
      await this.store.transaction(async (transaction) => {
        const version = await this.mountableVersion(input.skill_version_id, transaction);
        await requireActiveServer(this.servers, version, 'mounted');
        await this.store.insert(
          { ...policy, id, agent_id: agentId, skill_id: version.skill_id, skill_version_id: version.id },
          op.operator.admin_user_id,
          transaction,
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
    await this.store.transaction(async (transaction) => {
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
      await this.store.update(mountId, next, transaction);
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
    await this.store.transaction(async (transaction) => {
      const mount = await this.find(agentId, mountId, transaction);
      await this.store.delete(mountId, transaction);
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
    const row = await this.store.runnable(agentId, mountId);
    if (!row) throw new NotFoundError(`agent ${agentId} has no skill mount ${mountId}`, { code: 'MOUNT_NOT_FOUND' });
    return presentMount(row);
  }

  private async find(agentId: string, mountId: string, transaction: Transaction): Promise<MountRow> {
    const row = await this.store.lock(agentId, mountId, transaction);
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
    if (!(await this.agents.exists(agentId))) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
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
