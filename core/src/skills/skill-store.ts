import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';
import { decodeCursor, newestFirst } from '../db/keyset-cursor.js';

export interface SkillRow {
  id: string;
  name: string;
  description: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

export interface SkillListRow extends SkillRow {
  version_count: string;
  latest_released_version_id: string | null;
}

export interface VersionRow {
  id: string;
  skill_id: string;
  version_number: number;
  backend_type: string;
  backend_ref_id: string | null;
  config: Record<string, unknown>;
  is_released: boolean;
  released_at: Date | null;
  released_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const SKILL_SELECT = `SELECT s.*, (SELECT count(*) FROM skill_versions v WHERE v.skill_id = s.id) AS version_count,
  (SELECT v.id FROM skill_versions v WHERE v.skill_id = s.id AND v.is_released ORDER BY v.version_number DESC LIMIT 1) AS latest_released_version_id
  FROM skills s`;

/** The SQL of skill assets: the `skills` and `skill_versions` tables. Writes take the caller's transaction. */
export class SkillStore extends SqlStore {
  /** Newest first after the keyset cursor, one more than `limit` when another page follows. */
  page(status: string | null, cursor: string | undefined, limit: number): Promise<SkillListRow[]> {
    const [cursorAt, cursorId] = decodeCursor(cursor);
    return this.db.query<SkillListRow>(
      `${SKILL_SELECT} WHERE ($1::text IS NULL OR s.status = $1)
       AND ($2::timestamptz IS NULL OR (s.created_at, s.id::text) < ($2::timestamptz, $3::text))
       ORDER BY s.created_at DESC, s.id DESC LIMIT $4`,
      { bind: [status, cursorAt, cursorId, limit + 1], type: QueryTypes.SELECT },
    );
  }

  /** The skill with its version count and latest release. */
  async listed(id: string): Promise<SkillListRow | undefined> {
    const [row] = await this.db.query<SkillListRow>(`${SKILL_SELECT} WHERE s.id = try_uuid($1)`, { bind: [id], type: QueryTypes.SELECT });
    return row;
  }

  /** The skill; locked for the transaction when one is given. */
  async skill(id: string, transaction?: Transaction): Promise<SkillRow | undefined> {
    const [row] = await this.db.query<SkillRow>(`SELECT * FROM skills WHERE id = try_uuid($1)${transaction ? ' FOR UPDATE' : ''}`, {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  async insertSkill(skill: Pick<SkillRow, 'id' | 'name' | 'description' | 'status'>, createdBy: string | null, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(`INSERT INTO skills (id, name, description, status, created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, now(), now())`, {
      bind: [skill.id, skill.name, skill.description, skill.status, createdBy],
      transaction,
    });
  }

  async updateSkill(skill: Pick<SkillRow, 'id' | 'name' | 'description' | 'status'>, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('UPDATE skills SET name = $2, description = $3, status = $4, updated_at = now() WHERE id = $1', {
      bind: [skill.id, skill.name, skill.description, skill.status],
      transaction,
    });
  }

  versionsPage<T>(skillId: string, releasedOnly: boolean, page: { limit: number; cursor?: string }, present: (row: VersionRow) => T) {
    return newestFirst(
      this.db,
      { from: 'skill_versions', where: 'r.skill_id = $1 AND (NOT $2::boolean OR r.is_released)', bind: [skillId, releasedOnly] },
      page,
      present,
    );
  }

  /** The version; locked for the transaction when one is given. */
  async version(id: string, transaction?: Transaction): Promise<VersionRow | undefined> {
    const [row] = await this.db.query<VersionRow>(`SELECT * FROM skill_versions WHERE id = try_uuid($1)${transaction ? ' FOR UPDATE' : ''}`, {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  /** A version numbered after the skill's last one; released at once with `releasedBy`. */
  async insertVersion(
    version: Pick<VersionRow, 'id' | 'skill_id' | 'backend_type' | 'backend_ref_id' | 'config' | 'is_released'>,
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `INSERT INTO skill_versions (id, skill_id, version_number, backend_type, backend_ref_id, config, is_released, released_at, released_by, created_by, created_at, updated_at)
       SELECT $1::uuid, $2::uuid, COALESCE(max(version_number), 0) + 1, $3::text, $4::text, $5::jsonb, $6::boolean,
              CASE WHEN $6::boolean THEN now() END, CASE WHEN $6::boolean THEN $7::uuid END, $7::uuid, now(), now()
       FROM skill_versions WHERE skill_id = $2`,
      {
        bind: [version.id, version.skill_id, version.backend_type, version.backend_ref_id, JSON.stringify(version.config), version.is_released, createdBy],
        transaction,
      },
    );
  }

  async updateDraft(version: Pick<VersionRow, 'id' | 'backend_type' | 'backend_ref_id' | 'config'>, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('UPDATE skill_versions SET backend_type = $2, backend_ref_id = $3, config = $4, updated_at = now() WHERE id = $1', {
      bind: [version.id, version.backend_type, version.backend_ref_id, JSON.stringify(version.config)],
      transaction,
    });
  }

  async markReleased(versionId: string, releasedBy: string | null, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('UPDATE skill_versions SET is_released = true, released_at = now(), released_by = $2, updated_at = now() WHERE id = $1', {
      bind: [versionId, releasedBy],
      transaction,
    });
  }
}
