import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, type SkillBackend } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { z } from 'zod';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { requireActiveServer, validateBackend } from './backend-checks.js';
import type { SkillMcpServers } from './mcp-servers.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import type { SkillAssets } from './skill-assets.js';
import type { SkillStore, VersionRow } from './skill-store.js';

const versionFields = {
  backend_type: z.string().trim().min(1).max(64),
  backend_ref_id: z.string().trim().min(1).max(200).nullable(),
  config: z.record(z.string(), z.unknown()),
};

/** `POST /skills/{id}/versions`: a draft unless `is_released` asks to release it at once (same rules as the release call). */
export const versionCreateSchema = z
  .object({ ...versionFields, is_released: z.boolean() })
  .partial()
  .required({ backend_type: true })
  .strict();
export const versionUpdateSchema = z.object(versionFields).partial().strict();
export type VersionCreateInput = z.output<typeof versionCreateSchema>;
export type VersionUpdateInput = z.output<typeof versionUpdateSchema>;

/**
 * Skill versions (spec 3.3, 4.12): a draft is edited in place; release checks
 * the backend once more (an `mcp` server must be active, else 409) and makes
 * the version immutable.
 */
export class SkillVersions {
  private readonly store: SkillStore;

  constructor(
    /** For the audit rows each write commits with. */
    private readonly db: Sequelize,
    private readonly assets: SkillAssets,
    private readonly backends: KeyedRegistry<SkillBackend>,
    private readonly servers: SkillMcpServers,
  ) {
    this.store = assets.store;
  }

  async list(skillId: string, options: { released_only: boolean; limit: number; cursor?: string }) {
    await this.assets.find(skillId);
    return this.store.versionsPage(skillId, options.released_only, options, presentVersion);
  }

  async get(skillId: string, versionId: string) {
    return presentVersion(await this.find(skillId, versionId));
  }

  async create(skillId: string, input: VersionCreateInput, op: Operation) {
    const backend = { backend_type: input.backend_type, backend_ref_id: input.backend_ref_id ?? null, config: input.config ?? {} };
    validateBackend(this.backends, backend);
    const id = randomUUID();
    if (input.is_released) await requireActiveServer(this.servers, { ...backend, id }, 'released');
    await this.store.transaction(async (transaction) => {
      // Locking the skill numbers its versions one at a time.
      await this.assets.find(skillId, transaction);
      await this.store.insertVersion({ id, skill_id: skillId, ...backend, is_released: input.is_released ?? false }, op.operator.admin_user_id, transaction);
      const payload = {
        skill_id: skillId,
        backend_type: backend.backend_type,
        backend_ref_id: backend.backend_ref_id,
        is_released: input.is_released ?? false,
      };
      await auditOperation(this.db, 'core.skills', op, { action: 'skill_version.create', target_type: 'skill_version', target_id: id, payload }, transaction);
    });
    return this.get(skillId, id);
  }

  /** Edits a draft in place; a released version is immutable (409). */
  async update(skillId: string, versionId: string, input: VersionUpdateInput, op: Operation) {
    await this.store.transaction(async (transaction) => {
      const current = await this.find(skillId, versionId, transaction);
      if (current.is_released) throw immutable(current);
      const next = {
        backend_type: input.backend_type ?? current.backend_type,
        backend_ref_id: input.backend_ref_id === undefined ? current.backend_ref_id : input.backend_ref_id,
        config: input.config ?? current.config,
      };
      validateBackend(this.backends, next);
      await this.store.updateDraft({ id: versionId, ...next }, transaction);
      await auditOperation(
        this.db,
        'core.skills',
        op,
        { action: 'skill_version.update', target_type: 'skill_version', target_id: versionId, payload: { skill_id: skillId, changed: Object.keys(input) } },
        transaction,
      );
    });
    return this.get(skillId, versionId);
  }

  async release(skillId: string, versionId: string, op: Operation) {
    await this.store.transaction(async (transaction) => {
      const version = await this.find(skillId, versionId, transaction);
      if (version.is_released)
        throw new ConflictError(`skill version ${versionId} is already released (at ${version.released_at!.toISOString()})`, {
          code: 'SKILL_VERSION_RELEASED',
        });
      if (!this.backends.has(version.backend_type)) {
        throw new ConflictError(`skill version ${versionId} cannot be released: no enabled plugin provides its backend "${version.backend_type}"`, {
          code: 'SKILL_BACKEND_UNAVAILABLE',
        });
      }
      await requireActiveServer(this.servers, version, 'released');
      await this.store.markReleased(versionId, op.operator.admin_user_id, transaction);
      await auditOperation(
        this.db,
        'core.skills',
        op,
        {
          action: 'skill_version.release',
          target_type: 'skill_version',
          target_id: versionId,
          payload: { skill_id: skillId, version_number: version.version_number },
        },
        transaction,
      );
    });
    return this.get(skillId, versionId);
  }

  /** A version by id alone (mounts name only the version); `FOR UPDATE` inside a transaction. */
  async findById(versionId: string, transaction?: Transaction): Promise<VersionRow> {
    const row = await this.store.version(versionId, transaction);
    if (!row) throw new NotFoundError(`skill version ${versionId} not found`, { code: 'SKILL_VERSION_NOT_FOUND' });
    return row;
  }

  private async find(skillId: string, versionId: string, transaction?: Transaction): Promise<VersionRow> {
    const row = await this.findById(versionId, transaction);
    if (row.skill_id !== skillId) throw new NotFoundError(`skill ${skillId} has no version ${versionId}`, { code: 'SKILL_VERSION_NOT_FOUND' });
    return row;
  }
}

const immutable = (version: VersionRow) =>
  new ConflictError(`skill version ${version.id} (version ${version.version_number}) is released and immutable; create a new version to change it`, {
    code: 'SKILL_VERSION_RELEASED',
  });

export function presentVersion(row: VersionRow) {
  return {
    version_id: row.id,
    skill_id: row.skill_id,
    version_number: row.version_number,
    backend_type: row.backend_type,
    backend_ref_id: row.backend_ref_id,
    config: row.config,
    is_released: row.is_released,
    released_at: row.released_at?.toISOString() ?? null,
    released_by: row.released_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
