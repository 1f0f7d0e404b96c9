import { QueryTypes, type Sequelize } from 'sequelize';

export type AuditOutcome = 'success' | 'failure' | 'denied';

/** Filters of `GET /admin/audit-logs`; all optional but `limit`. */
export interface AuditLogQuery {
  actor_id?: string;
  /** Exact action, or a prefix when it ends with `.*` (`auth.*` matches `auth.login`, `auth.challenge.verify`). */
  action?: string;
  outcome?: AuditOutcome;
  /** Inclusive lower bound on `created_at`. */
  since?: Date;
  /** Exclusive upper bound on `created_at`. */
  until?: Date;
  limit: number;
  /** A `next_cursor` from a previous page. */
  cursor?: string;
}

export interface AuditLogItem {
  id: string;
  action: string;
  outcome: AuditOutcome;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  trace_id: string | null;
  source: string;
  client_ip: string | null;
  /** The `X-Request-Id` of the HTTP request that wrote the row; null for work outside a request. */
  request_id: string | null;
  payload: Record<string, unknown>;
  created_at: string;
}

export interface AuditLogPage {
  items: AuditLogItem[];
  next_cursor: string | null;
  limit: number;
}

interface AuditRow extends Omit<AuditLogItem, 'created_at'> {
  created_at: Date;
}

/** The cursor is opaque to clients: base64url of `{"before": "<id>"}`. */
export function encodeAuditCursor(beforeId: string): string {
  return Buffer.from(JSON.stringify({ before: beforeId })).toString('base64url');
}

/** The id a cursor continues below, or `undefined` when it is not one this host issued. */
export function decodeAuditCursor(cursor: string): string | undefined {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const before = (decoded as { before?: unknown } | null)?.before;
    return typeof before === 'string' && /^[1-9]\d{0,18}$/.test(before) ? before : undefined;
  } catch {
    return undefined;
  }
}

/** `LIKE` pattern for a literal prefix. */
const likePrefix = (prefix: string) => prefix.replace(/[\\%_]/g, (c) => `\\${c}`) + '%';

/**
 * Reads `admin_action_audits`, newest first, with keyset pagination on `id`
 * (stable while rows are appended: a walk never repeats or skips a row).
 */
export class AuditLog {
  constructor(private readonly db: Sequelize) {}

  async list(query: AuditLogQuery): Promise<AuditLogPage> {
    const where: string[] = [];
    const bind: unknown[] = [];
    const add = (sql: (param: string) => string, value: unknown) => {
      bind.push(value);
      where.push(sql(`$${bind.length}`));
    };
    if (query.actor_id !== undefined) add((p) => `actor_id = ${p}`, query.actor_id);
    if (query.action !== undefined) {
      if (query.action.endsWith('.*')) add((p) => `action LIKE ${p} ESCAPE '\\'`, likePrefix(query.action.slice(0, -1)));
      else add((p) => `action = ${p}`, query.action);
    }
    if (query.outcome !== undefined) add((p) => `outcome = ${p}`, query.outcome);
    if (query.since !== undefined) add((p) => `created_at >= ${p}`, query.since.toISOString());
    if (query.until !== undefined) add((p) => `created_at < ${p}`, query.until.toISOString());
    if (query.cursor !== undefined) {
      const before = decodeAuditCursor(query.cursor);
      if (before === undefined) throw new RangeError('cursor is not valid');
      add((p) => `id < ${p}::bigint`, before);
    }
    bind.push(query.limit + 1);
    // ORDER BY names the table: a bare `id` would sort the text alias.
    const rows = await this.db.query<AuditRow>(
      `SELECT id::text AS id, action, outcome, actor_id, target_type, target_id, trace_id, source, client_ip, request_id, payload, created_at
       FROM admin_action_audits
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY admin_action_audits.id DESC
       LIMIT $${bind.length}`,
      { bind, type: QueryTypes.SELECT },
    );
    const page = rows.slice(0, query.limit);
    return {
      items: page.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() })),
      next_cursor: rows.length > query.limit ? encodeAuditCursor(page.at(-1)!.id) : null,
      limit: query.limit,
    };
  }
}
