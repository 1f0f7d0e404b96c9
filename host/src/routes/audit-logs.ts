import { decodeAuditCursor } from '@agent-host/core';
import { z } from 'zod';
import { pageOf, pagingFields, timestamp } from '../validation.js';
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
      .refine(
        (a) => !a.includes('*') || (a.endsWith('.*') && a.indexOf('*') === a.length - 1 && a.length > 2),
        'use an exact action or a prefix ending in .* such as auth.*',
      )
      .optional(),
    outcome: z.enum(['success', 'failure', 'denied']).optional(),
    since: isoTime.optional(),
    until: isoTime.optional(),
    ...pagingFields,
    cursor: pagingFields.cursor.refine(
      (c) => c === undefined || decodeAuditCursor(c) !== undefined,
      'cursor is not valid; use next_cursor from a previous page',
    ),
  })
  .strict();

const auditEntry = z
  .object({
    id: z.string(),
    action: z.string(),
    outcome: z.enum(['success', 'failure', 'denied']),
    actor_id: z.string().nullable(),
    target_type: z.string().nullable(),
    target_id: z.string().nullable(),
    trace_id: z.string().nullable(),
    source: z.string(),
    client_ip: z.string().nullable(),
    request_id: z.string().nullable().describe('The X-Request-Id of the request that wrote the row; null for work outside a request'),
    payload: z.record(z.string(), z.unknown()),
    created_at: timestamp,
  })
  .meta({ id: 'AuditLogEntry' });

export const auditLogRoutes: RouteFactory<'auditLog'> = (domains) => {
  return [
    route({
      method: 'get',
      path: '/admin/audit-logs',
      access: { permission: 'audit_logs.read' },
      summary: 'The audit log, newest first; action is exact or a prefix ending in .*',
      query: listQuery,
      success: { status: 200, description: 'A page of audit entries', schema: pageOf(auditEntry) },
      handler: async (_req, _res, { query }) => domains.auditLog.list(query),
    }),
  ];
};
