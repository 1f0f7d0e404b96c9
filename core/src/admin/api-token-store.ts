import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';
import type { RoleCode } from './permissions.js';

export interface TokenRow {
  id: string;
  name: string;
  token_prefix: string;
  permissions: string[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

/** A live token with its active administrator; `stale_use` when its `last_used_at` is older than the resolution. */
export interface TokenPrincipalRow {
  id: string;
  permissions: string[] | null;
  stale_use: boolean;
  admin_user_id: string;
  username: string;
  display_name: string;
  role_code: RoleCode;
}

/** The SQL of administrator API tokens: the `admin_api_tokens` table. */
export class ApiTokenStore extends SqlStore {
  async insert(
    token: { id: string; adminUserId: string; name: string; hash: string; prefix: string; permissions: string[] | null; expiresInDays: number | null },
    transaction: Transaction,
  ): Promise<TokenRow> {
    const [row] = await this.db.query<TokenRow>(
      `INSERT INTO admin_api_tokens (id, admin_user_id, name, token_hash, token_prefix, permissions, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(days => $7::int) END, now())
       RETURNING *`,
      {
        bind: [token.id, token.adminUserId, token.name, token.hash, token.prefix, token.permissions, token.expiresInDays],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }

  /** The administrator's tokens, newest first, revoked ones included. */
  ofAdmin(adminUserId: string): Promise<TokenRow[]> {
    return this.db.query<TokenRow>('SELECT * FROM admin_api_tokens WHERE admin_user_id = $1 ORDER BY created_at DESC, id', {
      bind: [adminUserId],
      type: QueryTypes.SELECT,
    });
  }

  /** Revokes the administrator's token (again, harmlessly); resolves with whether it is theirs. */
  async revoke(tokenId: string, adminUserId: string): Promise<boolean> {
    const [row] = await this.db.query<{ id: string }>(
      'UPDATE admin_api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = try_uuid($1) AND admin_user_id = $2 RETURNING id',
      { bind: [tokenId, adminUserId], type: QueryTypes.SELECT },
    );
    return row !== undefined;
  }

  /** The live token of this hash, with `stale_use` judged against `resolution` (an interval such as `1 minute`). */
  async live(tokenHash: string, resolution: string): Promise<TokenPrincipalRow | undefined> {
    const [row] = await this.db.query<TokenPrincipalRow>(
      `SELECT t.id, t.permissions, t.last_used_at IS NULL OR t.last_used_at < now() - $2::interval AS stale_use,
              u.id AS admin_user_id, u.username, u.display_name, u.role_code
       FROM admin_api_tokens t JOIN admin_users u ON u.id = t.admin_user_id
       WHERE t.token_hash = $1 AND u.status = 'active' AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
      { bind: [tokenHash, resolution], type: QueryTypes.SELECT },
    );
    return row;
  }

  async markUsed(tokenId: string): Promise<void> {
    await this.db.query('UPDATE admin_api_tokens SET last_used_at = now() WHERE id = $1', { bind: [tokenId] });
  }
}
