import type { Sequelize, Transaction } from 'sequelize';
import type { AdminPrincipal, RequestOrigin } from '../admin/admin-auth.js';
import { insertAudit } from '../services/audit.js';

/** Who changes skills, from where. */
export interface SkillOperation {
  operator: AdminPrincipal;
  origin: RequestOrigin;
}

/** The success audit row of a skill change, committed in the change's transaction. */
export function auditSkillChange(
  db: Sequelize,
  op: SkillOperation,
  event: { action: string; target_type: string; target_id: string; payload: Record<string, unknown> },
  transaction: Transaction,
): Promise<void> {
  return insertAudit(db, 'core.skills', { ...event, outcome: 'success', actor_id: op.operator.admin_user_id }, { client_ip: op.origin.clientIp, transaction });
}
