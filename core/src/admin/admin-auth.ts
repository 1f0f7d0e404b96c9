import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '@agent-host/sdk';
import { jwtVerify, SignJWT } from 'jose';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import { insertAudit } from '../services/audit-store.js';
import { LoginThrottle } from './login-throttle.js';
import { PERMISSION_CATALOG, type RoleCode } from './permissions.js';
import { burnPasswordCheck, hashPassword, randomToken, sha256, verifyPassword } from './secrets.js';

/** The administrator behind a request, with effective permissions. */
export interface AdminPrincipal {
  admin_user_id: string;
  username: string;
  display_name: string;
  role_code: RoleCode;
  session_id: string;
  access_version: number;
  permissions: string[];
  /** Set when the caller authenticated with an API token (`Authorization: Bearer`), not a browser session. */
  api_token_id?: string;
}

/** What login and refresh hand the transport to set as cookies; never shown in a body. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  accessMaxAgeSeconds: number;
  refreshMaxAgeSeconds: number;
}

export interface RequestOrigin {
  clientIp: string | null;
  userAgent: string | null;
}

interface SessionRow {
  session_id: string;
  access_version: number;
  admin_user_id: string;
  username: string;
  display_name: string;
  role_code: RoleCode;
}

const SOURCE = 'core.admin';
const INVALID_LOGIN = 'invalid username or password';

/**
 * Administrator sessions: argon2id passwords, short-lived signed access
 * tokens bound to a server-side session row (checked on every request), and
 * refresh tokens stored as SHA-256 and consumed once by an atomic update.
 */
export class AdminAuth {
  /** Password guesses, logins and challenge verifies alike. */
  readonly throttle: LoginThrottle;

  constructor(
    private readonly db: Sequelize,
    private readonly config: HostConfig['admin'],
    private readonly signingKey: Uint8Array,
  ) {
    this.throttle = new LoginThrottle(db, config.login_max_failures, config.login_lockout_seconds);
  }

  async login(username: string, password: string, origin: RequestOrigin): Promise<{ principal: AdminPrincipal; tokens: IssuedTokens }> {
    const refused = await this.throttle.reserve(username, origin.clientIp);
    if (refused) {
      await this.audit({ action: 'auth.login', outcome: 'denied', payload: { username, reason: 'locked' } }, origin);
      throw new TooManyRequestsError(`too many failed logins; try again in ${refused.retryAfterSeconds} s`, refused.retryAfterSeconds, {
        code: 'TOO_MANY_LOGIN_FAILURES',
      });
    }
    await sleep(await this.throttle.delayMs(username));
    const [user] = await this.db.query<{ id: string; password_hash: string; status: string }>(
      'SELECT id, password_hash, status FROM admin_users WHERE lower(username) = lower($1)',
      { bind: [username.trim()], type: QueryTypes.SELECT },
    );
    const valid = user ? await verifyPassword(user.password_hash, password) : (await burnPasswordCheck(password), false);
    if (!user || !valid) {
      await this.throttle.failed(username);
      await this.audit({ action: 'auth.login', outcome: 'failure', actor_id: user?.id, payload: { username, reason: 'invalid_credentials' } }, origin);
      throw new UnauthorizedError(INVALID_LOGIN, { code: 'INVALID_LOGIN' });
    }
    if (user.status !== 'active') {
      await this.audit({ action: 'auth.login', outcome: 'denied', actor_id: user.id, payload: { username, reason: 'account_disabled' } }, origin);
      throw new ForbiddenError('this administrator account is disabled', { code: 'ACCOUNT_DISABLED' });
    }
    await this.throttle.succeeded(username, origin.clientIp);
    const refreshToken = randomToken();
    const sessionId = randomUUID();
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `INSERT INTO admin_sessions (id, admin_user_id, refresh_token_hash, refresh_expires_at, client_ip, user_agent, created_at, last_seen_at)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5, $6, now(), now())`,
        {
          bind: [sessionId, user.id, sha256(refreshToken), this.config.refresh_token_ttl_seconds, origin.clientIp, origin.userAgent?.slice(0, 400) ?? null],
          transaction,
        },
      );
      await this.db.query('UPDATE admin_users SET last_login_at = now() WHERE id = $1', { bind: [user.id], transaction });
      await this.audit(
        { action: 'auth.login', outcome: 'success', actor_id: user.id, target_type: 'admin_session', target_id: sessionId },
        origin,
        transaction,
      );
    });
    const principal = (await this.loadSession(sessionId, 1))!;
    return { principal, tokens: await this.issue(principal, refreshToken) };
  }

  /**
   * Rotates the refresh token. The conditional update consumes the old token
   * atomically, so of concurrent refreshes with one token exactly one wins;
   * the access version moves on, so the old access token stops working at once.
   */
  async refresh(refreshToken: string, origin: RequestOrigin): Promise<{ principal: AdminPrincipal; tokens: IssuedTokens }> {
    const next = randomToken();
    const [rows] = (await this.db.query(
      `UPDATE admin_sessions s SET refresh_token_hash = $2, access_version = access_version + 1, last_seen_at = now()
       FROM admin_users u
       WHERE s.refresh_token_hash = $1 AND s.revoked_at IS NULL AND s.refresh_expires_at > now()
         AND u.id = s.admin_user_id AND u.status = 'active'
       RETURNING s.id, s.access_version, s.admin_user_id`,
      { bind: [sha256(refreshToken), sha256(next)] },
    )) as [{ id: string; access_version: number; admin_user_id: string }[], unknown];
    const row = rows[0];
    if (!row) {
      await this.audit({ action: 'auth.refresh', outcome: 'failure', payload: { reason: 'invalid_or_used_refresh_token' } }, origin);
      throw new UnauthorizedError('refresh token is invalid, expired or already used; log in again', { code: 'REFRESH_TOKEN_INVALID' });
    }
    await this.audit({ action: 'auth.refresh', outcome: 'success', actor_id: row.admin_user_id, target_type: 'admin_session', target_id: row.id }, origin);
    const principal = (await this.loadSession(row.id, row.access_version))!;
    return { principal, tokens: await this.issue(principal, next) };
  }

  /** Revokes the session; its access and refresh tokens stop working at once. */
  async logout(principal: AdminPrincipal, origin: RequestOrigin): Promise<void> {
    await this.db.transaction(async (transaction) => {
      await this.db.query("UPDATE admin_sessions SET revoked_at = now(), revoked_reason = 'logout' WHERE id = $1 AND revoked_at IS NULL", {
        bind: [principal.session_id],
        transaction,
      });
      await this.audit(
        { action: 'auth.logout', outcome: 'success', actor_id: principal.admin_user_id, target_type: 'admin_session', target_id: principal.session_id },
        origin,
        transaction,
      );
    });
  }

  /** The principal of an access token, or `undefined` when the token or its session is not valid now. */
  async authenticate(accessToken: string): Promise<AdminPrincipal | undefined> {
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(accessToken, this.signingKey, { algorithms: ['HS256'], audience: 'agent-host-admin' }));
    } catch {
      return undefined;
    }
    if (typeof claims.sid !== 'string' || typeof claims.ver !== 'number') return undefined;
    return this.loadSession(claims.sid, claims.ver);
  }

  /**
   * The session's principal now, with its current permissions, or `undefined`
   * once it was logged out, revoked, expired, its account disabled or its role
   * changed. A refresh keeps it live: a WebSocket opened with an older access
   * token follows the session, not the token (the gateway calls this before
   * each send).
   */
  async currentPrincipal(principal: Pick<AdminPrincipal, 'session_id' | 'role_code'>): Promise<AdminPrincipal | undefined> {
    const current = await this.loadSession(principal.session_id, null);
    return current?.role_code === principal.role_code ? current : undefined;
  }

  /** Creates the first super admin when there is no administrator; returns a generated password to print once. */
  async bootstrap(): Promise<{ username: string; generatedPassword?: string } | undefined> {
    const username = this.config.bootstrap_username.trim() || 'admin';
    const generated = this.config.bootstrap_password ? undefined : randomToken(15);
    const passwordHash = await hashPassword(this.config.bootstrap_password || generated!);
    // Instances starting together on one database: the lock lets exactly one of them create the admin.
    const created = await this.db.transaction(async (transaction) => {
      await this.db.query("SELECT pg_advisory_xact_lock(hashtext('agent-host.admin-bootstrap'))", { transaction });
      const [existing] = await this.db.query('SELECT 1 FROM admin_users LIMIT 1', { type: QueryTypes.SELECT, transaction });
      if (existing) return false;
      const id = randomUUID();
      await this.db.query(
        `INSERT INTO admin_users (id, username, display_name, password_hash, role_code, status, is_protected, created_at, updated_at)
         VALUES ($1, $2, $2, $3, 'super_admin', 'active', true, now(), now())`,
        { bind: [id, username, passwordHash], transaction },
      );
      await this.audit(
        { action: 'admin_user.bootstrap', outcome: 'success', actor_id: 'system', target_type: 'admin_user', target_id: id, payload: { username } },
        { clientIp: null },
        transaction,
      );
      return true;
    });
    return created ? { username, ...(generated && { generatedPassword: generated }) } : undefined;
  }

  /** A live session; with `accessVersion`, only while that is its current access version. */
  private async loadSession(sessionId: string, accessVersion: number | null): Promise<AdminPrincipal | undefined> {
    const [row] = await this.db.query<SessionRow>(
      `SELECT s.id AS session_id, s.access_version, u.id AS admin_user_id, u.username, u.display_name, u.role_code
       FROM admin_sessions s JOIN admin_users u ON u.id = s.admin_user_id
       WHERE s.id = $1 AND ($2::int IS NULL OR s.access_version = $2) AND s.revoked_at IS NULL AND s.refresh_expires_at > now() AND u.status = 'active'`,
      { bind: [sessionId, accessVersion], type: QueryTypes.SELECT },
    );
    if (!row) return undefined;
    return { ...row, permissions: await this.permissionsOf(row.admin_user_id, row.role_code) };
  }

  /** `super_admin`: the whole catalog, dynamically. `sub_admin`: its active grants. */
  async permissionsOf(adminUserId: string, role: RoleCode): Promise<string[]> {
    if (role === 'super_admin') return PERMISSION_CATALOG.map((p) => p.code);
    const grants = await this.db.query<{ permission_code: string }>(
      "SELECT permission_code FROM admin_permission_grants WHERE admin_user_id = $1 AND status = 'active' ORDER BY permission_code",
      { bind: [adminUserId], type: QueryTypes.SELECT },
    );
    return grants.map((g) => g.permission_code);
  }

  private async issue(principal: AdminPrincipal, refreshToken: string): Promise<IssuedTokens> {
    const accessToken = await new SignJWT({ sid: principal.session_id, ver: principal.access_version })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(principal.admin_user_id)
      .setAudience('agent-host-admin')
      .setIssuedAt()
      .setExpirationTime(`${this.config.access_token_ttl_seconds}s`)
      .sign(this.signingKey);
    return {
      accessToken,
      refreshToken,
      accessMaxAgeSeconds: this.config.access_token_ttl_seconds,
      refreshMaxAgeSeconds: this.config.refresh_token_ttl_seconds,
    };
  }

  /** Records an access or authentication event; with `transaction`, it commits with the change. */
  audit(event: Parameters<typeof insertAudit>[2], origin: Pick<RequestOrigin, 'clientIp'>, transaction?: Transaction): Promise<void> {
    return insertAudit(this.db, SOURCE, event, { client_ip: origin.clientIp, ...(transaction && { transaction }) });
  }
}
