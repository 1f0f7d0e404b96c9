import type { Sequelize, Transaction } from 'sequelize';
import type { AuditEvent, AuditWriter } from '@agent-host/sdk';
import { currentRequestId } from '../observability/request-scope.js';

export interface AuditContext {
  /** Commit the record with the change it describes. */
  transaction?: Transaction;
  client_ip?: string | null;
}

/** Appends one row to `admin_action_audits`; `source` is the plugin or core domain that wrote it, `request_id` the request it serves. */
export async function insertAudit(sequelize: Sequelize, source: string, event: AuditEvent, context: AuditContext = {}): Promise<void> {
  await sequelize.query(
    `INSERT INTO admin_action_audits (action, outcome, actor_id, target_type, target_id, trace_id, source, payload, client_ip, request_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())`,
    {
      bind: [
        event.action,
        event.outcome,
        event.actor_id ?? null,
        event.target_type ?? null,
        event.target_id ?? null,
        event.trace_id ?? null,
        source,
        JSON.stringify(event.payload ?? {}),
        context.client_ip ?? null,
        currentRequestId() ?? null,
      ],
      ...(context.transaction && { transaction: context.transaction }),
    },
  );
}

/** The SDK's audit writer for one plugin. */
export function createAuditWriter(sequelize: Sequelize, source: string): AuditWriter {
  return { write: (event) => insertAudit(sequelize, source, event) };
}
