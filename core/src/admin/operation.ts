import type { Sequelize, Transaction } from 'sequelize';
import { insertAudit } from '../services/audit-store.js';
import type { AdminPrincipal, RequestOrigin } from './admin-auth.js';

/** Who changes something through the control plane, from where. */
export interface Operation {
  operator: AdminPrincipal;
  origin: RequestOrigin;
}

/**
 * The audit row of an administrator's change to a core domain (`source`,
 * for example `core.mcp`). Pass the change's transaction so both commit
 * together; never give it a secret.
 */
export function auditOperation(
  db: Sequelize,
  source: string,
  op: Operation,
  event: { action: string; target_type: string; target_id: string; payload?: Record<string, unknown>; outcome?: 'success' | 'failure' },
  transaction?: Transaction,
): Promise<void> {
  return insertAudit(
    db,
    source,
    { outcome: 'success', ...event, actor_id: op.operator.admin_user_id },
    { client_ip: op.origin.clientIp, ...(transaction && { transaction }) },
  );
}
