import type { Sequelize, Transaction } from 'sequelize';
import type { AdminPrincipal, RequestOrigin } from '../admin/admin-auth.js';
import { insertAudit } from '../services/audit.js';

/** Who changes MCP resources, from where. */
export interface McpOperation {
  operator: AdminPrincipal;
  origin: RequestOrigin;
}

/** The administrator audit row of an MCP change (`source` core.mcp); pass the change's transaction. Never give it a secret. */
export function auditMcp(
  db: Sequelize,
  op: McpOperation,
  event: { action: string; target_type: string; target_id: string; payload?: Record<string, unknown>; outcome?: 'success' | 'failure' },
  transaction?: Transaction,
): Promise<void> {
  return insertAudit(db, 'core.mcp', { outcome: 'success', ...event, actor_id: op.operator.admin_user_id }, { client_ip: op.origin.clientIp, ...(transaction && { transaction }) });
}
