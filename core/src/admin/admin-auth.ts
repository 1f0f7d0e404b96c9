import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '@agent-host/sdk';
import { jwtVerify, SignJWT } from 'jose';
import type { Sequelize, Transaction } from 'sequelize';
import { AdminStore } from './admin-store.js';
import type { HostConfig } from '../config/schema.js';
import { insertAudit } from '../services/audit-store.js';
import { LoginThrottle } from './login-throttle.js';
import { PERMISSION_CATALOG, type RoleCode } from './permissions.js';
import { burnPasswordCheck, hashPassword, randomToken, sha256, verifyPassword } from './secrets.js';
import { VerifiedTokens, type VerifiedClaims } from './verified-tokens.js';

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

const SOURCE = 'core.admin';
const INVALID_LOGIN = 'invalid username or password';

/** Every code of the permission catalog: what a super admin holds, dynamically. */
const catalogCodes = () => PERMISSION_CATALOG.map((p) => p.code);

/**
 * Administrator sessions: argon2id passwords, short-lived signed access
 * tokens bound to a server-side session row (checked on every request), and
 * refresh tokens stored as SHA-256 and consumed once by an atomic update.
 */
export class AdminAuth {
  /** Password guesses, logins and challenge verifies alike. */
  readonly throttle: LoginThrottle;
  /** Also the store of AdminUsers and Challenges: one place for the administrator tables. */
  readonly store: AdminStore;
  private readonly verified = new VerifiedTokens();

  constructor(
    private readonly db: Sequelize,
    private readonly config: HostConfig['admin'],
    private readonly signingKey: Uint8Array,
  ) {
    this.throttle = new LoginThrottle(db, config.login_max_failures, config.login_lockout_seconds);
    this.store = new AdminStore(db);
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
    const user = await this.store.credentials(username.trim());
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
    await this.store.transaction(async (transaction) => {
      await this.store.insertSession(
        {
          id: sessionId,
          adminUserId: user.id,
          refreshTokenHash: sha256(refreshToken),
          ttlSeconds: this.config.refresh_token_ttl_seconds,
          clientIp: origin.clientIp,
          userAgent: origin.userAgent?.slice(0, 400) ?? null,
        },
        transaction,
      );
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
    const row = await this.store.rotateRefresh(sha256(refreshToken), sha256(next));
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
    await this.store.transaction(async (transaction) => {
      await this.store.revokeSession(principal.session_id, 'logout', transaction);
      await this.audit(
        { action: 'auth.logout', outcome: 'success', actor_id: principal.admin_user_id, target_type: 'admin_session', target_id: principal.session_id },
        origin,
        transaction,
      );
    });
  }

  /** The principal of an access token, or `undefined` when the token or its session is not valid now. */
  async authenticate(accessToken: string): Promise<AdminPrincipal | undefined> {
    const claims = this.verified.get(accessToken) ?? (await this.verify(accessToken));
    return claims && this.loadSession(claims.sid, claims.ver);
  }

  /** The claims of a valid access token that has not expired, remembered for its next requests. */
  private async verify(accessToken: string): Promise<VerifiedClaims | undefined> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(accessToken, this.signingKey, { algorithms: ['HS256'], audience: 'agent-host-admin' }));
    } catch {
      return undefined;
    }
    const { sid, ver, exp } = payload;
    if (typeof sid !== 'string' || typeof ver !== 'number' || typeof exp !== 'number') return undefined;
    const claims = { sid, ver, expiresAtMs: exp * 1000 };
    this.verified.add(accessToken, claims);
    return claims;
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
    const created = await this.store.transaction(async (transaction) => {
      await this.store.lockBootstrap(transaction);
      if (await this.store.anyUser(transaction)) return false;
      const id = randomUUID();
      await this.store.insertUser(
        { id, username, display_name: username, role_code: 'super_admin', is_protected: true, password_hash: passwordHash },
        transaction,
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
    const row = await this.store.liveSession(sessionId, accessVersion);
    if (!row) return undefined;
    const { grants, ...principal } = row;
    return { ...principal, permissions: principal.role_code === 'super_admin' ? catalogCodes() : grants };
  }

  /** `super_admin`: the whole catalog, dynamically. `sub_admin`: its active grants. */
  async permissionsOf(adminUserId: string, role: RoleCode): Promise<string[]> {
    if (role === 'super_admin') return catalogCodes();
    return (await this.store.activeGrants(adminUserId)).map((g) => g.permission_code);
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
