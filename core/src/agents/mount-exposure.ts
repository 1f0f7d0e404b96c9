import type { Sequelize, Transaction } from 'sequelize';
import { AgentStore } from './agent-store.js';

/**
 * What a new mount exposes, for its audit entry: a source, tool or skill mounted on a `public_anonymous` agent
 * answers anonymous callers, so such mounts are recorded as public (`exposed_publicly`).
 */
export async function mountExposure(
  db: Sequelize,
  agentId: string,
  transaction: Transaction,
): Promise<{ agent_public_access_mode: string | null; exposed_publicly: boolean }> {
  const mode = await new AgentStore(db).publicAccessMode(agentId, transaction);
  return { agent_public_access_mode: mode ?? null, exposed_publicly: mode === 'public_anonymous' };
}
