import { QueryTypes, type Sequelize } from 'sequelize';

/** Runs `deletion` (a `DELETE` without `RETURNING`) and resolves with how many rows it deleted. */
export async function deletedCount(db: Sequelize, deletion: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(`WITH gone AS (${deletion} RETURNING 1) SELECT count(*)::int AS n FROM gone`, { type: QueryTypes.SELECT });
  return row!.n;
}
