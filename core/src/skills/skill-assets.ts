import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import { QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { decodeCursor, keysetPage } from '../db/keyset-cursor.js';
import { auditOperation, type Operation } from '../admin/operation.js';

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

export interface SkillRow {
  id: string;
  name: string;
  description: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

interface SkillListRow extends SkillRow {
  version_count: string;
  latest_released_version_id: string | null;
}

const SKILL_SELECT = `SELECT s.*, (SELECT count(*) FROM skill_versions v WHERE v.skill_id = s.id) AS version_count,
  (SELECT v.id FROM skill_versions v WHERE v.skill_id = s.id AND v.is_released ORDER BY v.version_number DESC LIMIT 1) AS latest_released_version_id
  FROM skills s`;

/** Skill assets (spec 2.8, 4.12). Every write commits with its audit record. */
export class SkillAssets {
  constructor(private readonly db: Sequelize) {}

  async list(options: { status?: string; limit: number; cursor?: string }) {
    const [cursorAt, cursorId] = decodeCursor(options.cursor);
    const rows = await this.db.query<SkillListRow>(
      `${SKILL_SELECT} WHERE ($1::text IS NULL OR s.status = $1)
       AND ($2::timestamptz IS NULL OR (s.created_at, s.id::text) < ($2::timestamptz, $3::text))
       ORDER BY s.created_at DESC, s.id DESC LIMIT $4`,
      { bind: [options.status ?? null, cursorAt, cursorId, options.limit + 1], type: QueryTypes.SELECT },
    );
    return keysetPage(rows, options.limit, presentSkill);
  }

  async get(id: string) {
    const [row] = await this.db.query<SkillListRow>(`${SKILL_SELECT} WHERE s.id = try_uuid($1)`, { bind: [id], type: QueryTypes.SELECT });
    if (!row) throw new NotFoundError(`skill ${id} not found`, { code: 'SKILL_NOT_FOUND' });
    return presentSkill(row);
  }

  async create(input: SkillCreateInput, op: Operation) {
    const id = randomUUID();
    await this.write(input.name, async (transaction) => {
      await this.db.query(`INSERT INTO skills (id, name, description, status, created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, now(), now())`, {
        bind: [id, input.name, input.description ?? '', input.status ?? 'active', op.operator.admin_user_id],
        transaction,
      });
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
      await this.db.query('UPDATE skills SET name = $2, description = $3, status = $4, updated_at = now() WHERE id = $1', {
        bind: [id, input.name ?? current.name, input.description ?? current.description, input.status ?? current.status],
        transaction,
      });
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
    const [row] = await this.db.query<SkillRow>(`SELECT * FROM skills WHERE id = try_uuid($1)${transaction ? ' FOR UPDATE' : ''}`, {
      bind: [id],
      type: QueryTypes.SELECT,
      ...(transaction && { transaction }),
    });
    if (!row) throw new NotFoundError(`skill ${id} not found`, { code: 'SKILL_NOT_FOUND' });
    return row;
  }

  /** Runs a write in a transaction; a name another skill holds (in any letter case) is a 409. */
  private async write(name: string | undefined, work: (transaction: Transaction) => Promise<void>): Promise<void> {
    try {
      await this.db.transaction(work);
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
