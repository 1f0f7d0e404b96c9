import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import { UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { keysetPage } from '../db/keyset-cursor.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { SkillStore, type SkillListRow, type SkillRow } from './skill-store.js';

export const SKILL_STATUSES = ['active', 'disabled'] as const;

const skillFields = {
  // A runtime offers each mounted skill to the model as a tool of this name, so it follows model APIs' tool-name rule.
  name: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1 to 64 letters, digits, "_" or "-": a runtime offers the skill to the model under this name'),
  description: z.string().max(5000),
  status: z.enum(SKILL_STATUSES),
};

export const skillCreateSchema = z.object(skillFields).partial().required({ name: true }).strict();
export const skillUpdateSchema = z.object(skillFields).partial().strict();
export type SkillCreateInput = z.output<typeof skillCreateSchema>;
export type SkillUpdateInput = z.output<typeof skillUpdateSchema>;

/** Skill assets (spec 2.8, 4.12). Every write commits with its audit record. */
export class SkillAssets {
  readonly store: SkillStore;

  constructor(
    /** For the audit rows each write commits with. */
    private readonly db: Sequelize,
  ) {
    this.store = new SkillStore(db);
  }

  async list(options: { status?: string; limit: number; cursor?: string }) {
    return keysetPage(await this.store.page(options.status ?? null, options.cursor, options.limit), options.limit, presentSkill);
  }

  async get(id: string) {
    const row = await this.store.listed(id);
    if (!row) throw new NotFoundError(`skill ${id} not found`, { code: 'SKILL_NOT_FOUND' });
    return presentSkill(row);
  }

  async create(input: SkillCreateInput, op: Operation) {
    const id = randomUUID();
    await this.write(input.name, async (transaction) => {
      await this.store.insertSkill(
        { id, name: input.name, description: input.description ?? '', status: input.status ?? 'active' },
        op.operator.admin_user_id,
        transaction,
      );
      await auditOperation(
        this.db,
        'core.skills',
        op,
        { action: 'skill.create', target_type: 'skill', target_id: id, payload: { name: input.name } },
        transaction,
      );
    });
    return this.get(id);
  }

  async update(id: string, input: SkillUpdateInput, op: Operation) {
    const current = await this.find(id);
    await this.write(input.name, async (transaction) => {
      await this.store.updateSkill(
        { id, name: input.name ?? current.name, description: input.description ?? current.description, status: input.status ?? current.status },
        transaction,
      );
      await auditOperation(
        this.db,
        'core.skills',
        op,
        { action: 'skill.update', target_type: 'skill', target_id: id, payload: { changed: Object.keys(input) } },
        transaction,
      );
    });
    return this.get(id);
  }

  async find(id: string, transaction?: Transaction): Promise<SkillRow> {
    const row = await this.store.skill(id, transaction);
    if (!row) throw new NotFoundError(`skill ${id} not found`, { code: 'SKILL_NOT_FOUND' });
    return row;
  }

  /** Runs a write in a transaction; a name another skill holds (in any letter case) is a 409. */
  private async write(name: string | undefined, work: (transaction: Transaction) => Promise<void>): Promise<void> {
    try {
      await this.store.transaction(work);
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new ConflictError(`a skill named "${name}" already exists`, { code: 'SKILL_EXISTS' });
      throw error;
    }
  }
}

function presentSkill(row: SkillListRow) {
  return {
    skill_id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    version_count: Number(row.version_count),
    latest_released_version_id: row.latest_released_version_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
