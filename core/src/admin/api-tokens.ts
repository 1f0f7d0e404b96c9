import { randomUUID } from 'node:crypto';
import { ForbiddenError, NotFoundError, ValidationError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import type { AdminAuth, AdminPrincipal, RequestOrigin } from './admin-auth.js';
import type { Challenges } from './challenges.js';
import { ApiTokenStore, type TokenRow } from './api-token-store.js';
import { isPermissionCode } from './permissions.js';
import { randomToken, sha256 } from './secrets.js';

/** Every token starts so, to be told apart in logs and found by secret scanners. */
export const API_TOKEN_PREFIX = 'ahp_';

/** How often `last_used_at` is written for a token in steady use. */
const LAST_USED_RESOLUTION = '1 minute';

/** A token as the API shows it: never the token itself, which is shown once when it is made. */
function present(row: TokenRow) {
  return {
    token_id: row.id,
    name: row.name,
    token_prefix: row.token_prefix,
    permissions: row.permissions,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export type ApiTokenView = ReturnType<typeof present>;

export interface ApiTokenInput {
  name: string;
  /** A subset of the administrator's permissions; `null` or absent: the administrator's permissions, as they change. */
  permissions?: string[] | null;
  /** Days until the token stops working; absent or `null`: it works until revoked. */
  expires_in_days?: number | null;
}

/**
 * Administrator API tokens (personal access tokens): a machine calls the control plane as the administrator who
 * made the token, with the administrator's permissions or a subset, sent as `Authorization: Bearer`. Only a hash is
 * stored; the token is shown once. Making one is a sensitive operation (a challenge), and a token cannot take
 * challenges itself, so it never reaches operations that need one.
 */
export class ApiTokens {
  private readonly store: ApiTokenStore;

  constructor(
    db: Sequelize,
    private readonly auth: AdminAuth,
    private readonly challenges: Challenges,
  ) {
    this.store = new ApiTokenStore(db);
  }

  async create(input: ApiTokenInput, op: { operator: AdminPrincipal; origin: RequestOrigin; challengeToken: string | undefined }) {
    const permissions = input.permissions ?? null;
    if (permissions) {
      const unknown = permissions.filter((code) => !isPermissionCode(code));
      if (unknown.length)
        throw new ValidationError(unknown.map((code) => ({ loc: ['body', 'permissions'], msg: `unknown permission "${code}"`, type: 'unknown_permission' })));
      const notHeld = permissions.filter((code) => !op.operator.permissions.includes(code));
      if (notHeld.length)
        throw new ForbiddenError(`a token holds only permissions you hold; you do not hold ${notHeld.join(', ')}`, { code: 'PERMISSION_NOT_HELD' });
    }
    const id = randomUUID();
    const token = `${API_TOKEN_PREFIX}${randomToken(32)}`;
    const row = await this.store.transaction(async (transaction) => {
      await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
      const created = await this.store.insert(
        {
          id,
          adminUserId: op.operator.admin_user_id,
          name: input.name,
          hash: sha256(token),
          prefix: token.slice(0, API_TOKEN_PREFIX.length + 6),
          permissions,
          expiresInDays: input.expires_in_days ?? null,
        },
        transaction,
      );
      await this.auth.audit(
        {
          action: 'auth.api_token.create',
          outcome: 'success',
          actor_id: op.operator.admin_user_id,
          target_type: 'admin_api_token',
          target_id: id,
          payload: { name: input.name, permissions },
        },
        op.origin,
        transaction,
      );
      return created;
    });
    return { ...present(row), token };
  }

  /** The administrator's own tokens, newest first, revoked ones included. */
  async list(principal: AdminPrincipal) {
    return { items: (await this.store.ofAdmin(principal.admin_user_id)).map(present) };
  }

  /** Revokes one of the administrator's own tokens; it stops working at once. */
  async revoke(tokenId: string, op: { operator: AdminPrincipal; origin: RequestOrigin }): Promise<void> {
    if (!(await this.store.revoke(tokenId, op.operator.admin_user_id)))
      throw new NotFoundError(`you have no API token ${tokenId}`, { code: 'API_TOKEN_NOT_FOUND' });
    await this.auth.audit(
      { action: 'auth.api_token.revoke', outcome: 'success', actor_id: op.operator.admin_user_id, target_type: 'admin_api_token', target_id: tokenId },
      op.origin,
    );
  }

  /**
   * The principal a bearer token acts as: its administrator, active, with the administrator's current permissions
   * narrowed to the token's; `undefined` for an unknown, revoked or expired token.
   */
  async authenticate(token: string): Promise<AdminPrincipal | undefined> {
    if (!token.startsWith(API_TOKEN_PREFIX)) return undefined;
    const row = await this.store.live(sha256(token), LAST_USED_RESOLUTION);
    if (!row) return undefined;
    // last_used_at to the minute: a token in steady use writes once a minute, not once a request.
    if (row.stale_use) await this.store.markUsed(row.id);
    const held = await this.auth.permissionsOf(row.admin_user_id, row.role_code);
    return {
      admin_user_id: row.admin_user_id,
      username: row.username,
      display_name: row.display_name,
      role_code: row.role_code,
      session_id: `api-token:${row.id}`,
      access_version: 0,
      permissions: row.permissions ? held.filter((code) => row.permissions!.includes(code)) : held,
      api_token_id: row.id,
    };
  }
}
