import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { preparedQuery } from '../db/prepared-query.js';
import { SqlStore } from '../db/sql-store.js';
import type { RoleCode } from './permissions.js';

export interface UserRow {
  id: string;
  username: string;
  display_name: string;
  role_code: RoleCode;
  status: 'active' | 'disabled';
  is_protected: boolean;
  created_at: Date;
  updated_at: Date;
  last_login_at: Date | null;
}

export interface GrantRow {
  id: string;
  permission_code: string;
  granted_by: string | null;
  created_at: Date;
}

/** A live session with its administrator. */
export interface SessionPrincipalRow {
  session_id: string;
  access_version: number;
  admin_user_id: string;
  username: string;
  display_name: string;
  role_code: RoleCode;
}

const USER_COLUMNS = 'id, username, display_name, role_code, status, is_protected, created_at, updated_at, last_login_at';

/** The SQL of administrators: `admin_users`, their `admin_sessions` and their `admin_permission_grants`. */
export class AdminStore extends SqlStore {
  /** Users by lower-case name after `cursor`, one more than `limit` when another page follows. */
  users(cursor: string | null, limit: number): Promise<UserRow[]> {
    return this.db.query<UserRow>(
      `SELECT ${USER_COLUMNS} FROM admin_users WHERE ($1::text IS NULL OR lower(username) > $1) ORDER BY lower(username) LIMIT $2`,
      {
        bind: [cursor, limit + 1],
        type: QueryTypes.SELECT,
      },
    );
  }

  async user(id: string): Promise<UserRow | undefined> {
    const [row] = await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM admin_users WHERE id = try_uuid($1)`, { bind: [id], type: QueryTypes.SELECT });
    return row;
  }

  /** The account a login names, in any letter case, with its password hash. */
  async credentials(username: string): Promise<{ id: string; password_hash: string; status: string } | undefined> {
    const [row] = await this.db.query<{ id: string; password_hash: string; status: string }>(
      'SELECT id, password_hash, status FROM admin_users WHERE lower(username) = lower($1)',
      { bind: [username], type: QueryTypes.SELECT },
    );
    return row;
  }

  async usernameTaken(username: string): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM admin_users WHERE lower(username) = lower($1)', { bind: [username], type: QueryTypes.SELECT });
    return row !== undefined;
  }

  async anyUser(transaction: Transaction): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM admin_users LIMIT 1', { type: QueryTypes.SELECT, transaction });
    return row !== undefined;
  }

  /** Whether another active super admin than `exceptId` exists. */
  async otherActiveSuperAdmin(exceptId: string, transaction: Transaction): Promise<boolean> {
    const [row] = await this.db.query("SELECT 1 FROM admin_users WHERE role_code = 'super_admin' AND status = 'active' AND id <> $1 LIMIT 1", {
      bind: [exceptId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row !== undefined;
  }

  async insertUser(
    user: Pick<UserRow, 'id' | 'username' | 'display_name' | 'role_code' | 'is_protected'> & { password_hash: string },
    transaction?: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO admin_users (id, username, display_name, password_hash, role_code, status, is_protected, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'active', $6, now(), now())`,
      { bind: [user.id, user.username, user.display_name, user.password_hash, user.role_code, user.is_protected], transaction },
    );
  }

  /** Changes the fields given; the others stay. */
  async updateUser(id: string, fields: Partial<Pick<UserRow, 'display_name' | 'role_code' | 'status'>>, transaction: Transaction): Promise<void> {
    await this.db.query(
      `UPDATE admin_users SET display_name = COALESCE($2, display_name), role_code = COALESCE($3, role_code),
              status = COALESCE($4, status), updated_at = now() WHERE id = $1`,
      { bind: [id, fields.display_name ?? null, fields.role_code ?? null, fields.status ?? null], transaction },
    );
  }

  async setPassword(id: string, passwordHash: string, transaction: Transaction): Promise<void> {
    await this.db.query('UPDATE admin_users SET password_hash = $2, updated_at = now() WHERE id = $1', { bind: [id, passwordHash], transaction });
  }

  async deleteUser(id: string, transaction: Transaction): Promise<void> {
    await this.db.query('DELETE FROM admin_users WHERE id = $1', { bind: [id], transaction });
  }

  activeGrants(adminUserId: string): Promise<GrantRow[]> {
    return this.db.query<GrantRow>(
      "SELECT id, permission_code, granted_by, created_at FROM admin_permission_grants WHERE admin_user_id = $1 AND status = 'active' ORDER BY permission_code",
      { bind: [adminUserId], type: QueryTypes.SELECT },
    );
  }

  /** Adds the grant unless it is active already; resolves with whether it did. */
  async insertGrant(adminUserId: string, code: string, grantedBy: string, transaction: Transaction): Promise<boolean> {
    const [rows] = (await this.db.query(
      `INSERT INTO admin_permission_grants (id, admin_user_id, permission_code, status, granted_by, created_at)
       VALUES ($1, $2, $3, 'active', $4, now()) ON CONFLICT (admin_user_id, permission_code) WHERE status = 'active' DO NOTHING RETURNING id`,
      { bind: [randomUUID(), adminUserId, code, grantedBy], transaction },
    )) as [unknown[], unknown];
    return rows.length > 0;
  }

  /** Revokes an active grant of the user; resolves with its permission, or `undefined` when there is none. */
  async revokeGrant(adminUserId: string, grantId: string, transaction: Transaction): Promise<string | undefined> {
    const [rows] = (await this.db.query(
      "UPDATE admin_permission_grants SET status = 'revoked', revoked_at = now() WHERE id = $1 AND admin_user_id = $2 AND status = 'active' RETURNING permission_code",
      { bind: [grantId, adminUserId], transaction },
    )) as [{ permission_code: string }[], unknown];
    return rows[0]?.permission_code;
  }

  async insertSession(
    session: { id: string; adminUserId: string; refreshTokenHash: string; ttlSeconds: number; clientIp: string | null; userAgent: string | null },
    transaction: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO admin_sessions (id, admin_user_id, refresh_token_hash, refresh_expires_at, client_ip, user_agent, created_at, last_seen_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5, $6, now(), now())`,
      { bind: [session.id, session.adminUserId, session.refreshTokenHash, session.ttlSeconds, session.clientIp, session.userAgent], transaction },
    );
    await this.db.query('UPDATE admin_users SET last_login_at = now() WHERE id = $1', { bind: [session.adminUserId], transaction });
  }

  /**
   * Swaps a live session's refresh token for the next one and moves its access version on, in one conditional update:
   * of concurrent refreshes with one token exactly one wins.
   */
  async rotateRefresh(oldHash: string, nextHash: string): Promise<{ id: string; access_version: number; admin_user_id: string } | undefined> {
    const [rows] = (await this.db.query(
      `UPDATE admin_sessions s SET refresh_token_hash = $2, access_version = access_version + 1, last_seen_at = now()
       FROM admin_users u
       WHERE s.refresh_token_hash = $1 AND s.revoked_at IS NULL AND s.refresh_expires_at > now()
         AND u.id = s.admin_user_id AND u.status = 'active'
       RETURNING s.id, s.access_version, s.admin_user_id`,
      { bind: [oldHash, nextHash] },
    )) as [{ id: string; access_version: number; admin_user_id: string }[], unknown];
    return rows[0];
  }

  async revokeSession(sessionId: string, reason: string, transaction?: Transaction): Promise<void> {
    await this.db.query('UPDATE admin_sessions SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL', {
      bind: [sessionId, reason],
      transaction,
    });
  }

  async revokeSessionsOf(adminUserId: string, reason: string, transaction: Transaction): Promise<void> {
    await this.db.query('UPDATE admin_sessions SET revoked_at = now(), revoked_reason = $2 WHERE admin_user_id = $1 AND revoked_at IS NULL', {
      bind: [adminUserId, reason],
      transaction,
    });
  }

  /**
   * A live session of an active account (with `accessVersion`, only while that is its current access version) and the
   * codes of the account's active grants (none read for a super admin, who holds the whole catalog): one prepared
   * statement, read on every administrator request and before every send to an operator's socket.
   */
  async liveSession(sessionId: string, accessVersion: number | null): Promise<(SessionPrincipalRow & { grants: string[] }) | undefined> {
    const [row] = await preparedQuery<SessionPrincipalRow & { grants: string[] }>(
      this.db,
      'admin-live-session',
      `SELECT s.id AS session_id, s.access_version, u.id AS admin_user_id, u.username, u.display_name, u.role_code,
         COALESCE((SELECT array_agg(g.permission_code ORDER BY g.permission_code) FROM admin_permission_grants g
                   WHERE g.admin_user_id = u.id AND g.status = 'active' AND u.role_code <> 'super_admin'), '{}') AS grants
       FROM admin_sessions s JOIN admin_users u ON u.id = s.admin_user_id
       WHERE s.id = $1 AND ($2::int IS NULL OR s.access_version = $2) AND s.revoked_at IS NULL AND s.refresh_expires_at > now() AND u.status = 'active'`,
      [sessionId, accessVersion],
    );
    return row;
  }

  /** Serialises instances creating the first administrator at once, for the transaction. */
  async lockBootstrap(transaction: Transaction): Promise<void> {
    await this.db.query("SELECT pg_advisory_xact_lock(hashtext('agent-host.admin-bootstrap'))", { transaction });
  }
}
