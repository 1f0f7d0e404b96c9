import { AuditLog, decodeAuditCursor } from '@agent-host/core';
import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

/** An ISO 8601 time with `Z` or an offset, or a date (midnight UTC). */
const isoTime = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: 'expected an ISO 8601 time such as 2025-01-31T12:00:00Z' })
  .transform((value) => new Date(value));

const listQuery = z
  .object({
    actor_id: z.string().min(1).max(120).optional(),
    action: z
      .string()
      .min(1)
      .max(120)
      .refine((a) => !a.includes('*') || (a.endsWith('.*') && a.indexOf('*') === a.length - 1 && a.length > 2), 'use an exact action or a prefix ending in .* such as auth.*')
      .optional(),
    outcome: z.enum(['success', 'failure', 'denied']).optional(),
    since: isoTime.optional(),
    until: isoTime.optional(),
    ...pagingFields,
    cursor: pagingFields.cursor.refine((c) => c === undefined || decodeAuditCursor(c) !== undefined, 'cursor is not valid; use next_cursor from a previous page'),
  })
  .strict();

export const auditLogRoutes: RouteFactory = (app) => {
  const auditLog = new AuditLog(app.sequelize!);
  return [
    route({
      method: 'get',
      path: '/admin/audit-logs',
      access: { permission: 'audit_logs.read' },
      summary: 'The audit log, newest first ({items, next_cursor, limit}; query actor_id, action (exact or prefix.*), outcome, since, until, limit, cursor)',
      handler: async (req) => auditLog.list(parseQuery(listQuery, req.query)),
    }),
  ];
};
