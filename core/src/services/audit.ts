import type { Sequelize } from 'sequelize';
import type { AuditWriter } from '@agent-host/sdk';

/** Appends to `audit_events`; `source` is the plugin or core domain that wrote it. */
export function createAuditWriter(sequelize: Sequelize, source: string): AuditWriter {
  return {
    async write(event) {
      await sequelize.query(
        `INSERT INTO audit_events (action, outcome, actor_id, target_type, target_id, trace_id, source, payload, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())`,
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
          ],
        },
      );
    },
  };
}
