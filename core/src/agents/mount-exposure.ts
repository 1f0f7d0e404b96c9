import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/**
 * What a new mount exposes, for its audit entry: a source, tool or skill mounted on a `public_anonymous` agent
 * answers anonymous callers, so such mounts are recorded as public (`exposed_publicly`).
 */
export async function mountExposure(
  db: Sequelize,
  agentId: string,
  transaction: Transaction,
): Promise<{ agent_public_access_mode: string | null; exposed_publicly: boolean }> {
  const [row] = await db.query<{ public_access_mode: string }>('SELECT public_access_mode FROM agents WHERE id = try_uuid($1)', {
    bind: [agentId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return { agent_public_access_mode: row?.public_access_mode ?? null, exposed_publicly: row?.public_access_mode === 'public_anonymous' };
}
