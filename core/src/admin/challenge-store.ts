import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/** A challenge for its verify: the administrator's password hash with it. */
export interface PendingChallengeRow {
  nonce: string;
  status: string;
  admin_user_id: string;
  expired: boolean;
  password_hash: string;
}

/** Why a token could not be spent: whose challenge it is, its state, and whether its session lives. */
export interface SpentChallengeRow {
  admin_user_id: string;
  status: string;
  session_live: boolean;
}

/** The SQL of sensitive-operation challenges: the `admin_challenges` table. */
export class ChallengeStore {
  constructor(private readonly db: Sequelize) {}

  /** A pending challenge that expires after `ttlSeconds`; resolves with its expiry. */
  async insert(challenge: { id: string; adminUserId: string; sessionId: string; nonce: string; ttlSeconds: number }): Promise<Date> {
    const [row] = await this.db.query<{ expires_at: Date }>(
      `INSERT INTO admin_challenges (id, admin_user_id, session_id, nonce, status, expires_at, created_at)
       VALUES ($1, $2, $3, $4, 'pending', now() + make_interval(secs => $5), now()) RETURNING expires_at`,
      { bind: [challenge.id, challenge.adminUserId, challenge.sessionId, challenge.nonce, challenge.ttlSeconds], type: QueryTypes.SELECT },
    );
    return row!.expires_at;
  }

  async burn(id: string): Promise<void> {
    await this.db.query("UPDATE admin_challenges SET status = 'burned' WHERE id = $1 AND status = 'pending'", { bind: [id] });
  }

  async forVerify(id: string): Promise<PendingChallengeRow | undefined> {
    const [row] = await this.db.query<PendingChallengeRow>(
      `SELECT c.nonce, c.status, c.admin_user_id, c.expires_at <= now() AS expired, u.password_hash
       FROM admin_challenges c JOIN admin_users u ON u.id = c.admin_user_id WHERE c.id = try_uuid($1)`,
      { bind: [id], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Marks a pending challenge verified with its token; resolves with the token's expiry, or `undefined` when it was no longer pending. */
  async verify(id: string, tokenHash: string, ttlSeconds: number): Promise<Date | undefined> {
    const [rows] = (await this.db.query(
      `UPDATE admin_challenges SET status = 'verified', token_hash = $2, token_expires_at = now() + make_interval(secs => $3)
       WHERE id = $1 AND status = 'pending' RETURNING token_expires_at`,
      { bind: [id, tokenHash, ttlSeconds] },
    )) as [{ token_expires_at: Date }[], unknown];
    return rows[0]?.token_expires_at;
  }

  /** Spends a verified, fresh token of the administrator whose session lives; resolves with whether it did. */
  async spend(tokenHash: string, adminUserId: string, transaction: Transaction): Promise<boolean> {
    const [rows] = (await this.db.query(
      `UPDATE admin_challenges c SET status = 'used', used_at = now()
       FROM admin_sessions s
       WHERE c.token_hash = $1 AND c.admin_user_id = $2 AND c.status = 'verified' AND c.token_expires_at > now()
         AND s.id = c.session_id AND s.revoked_at IS NULL
       RETURNING c.id`,
      { bind: [tokenHash, adminUserId], transaction },
    )) as [{ id: string }[], unknown];
    return rows.length > 0;
  }

  async byToken(tokenHash: string, transaction: Transaction): Promise<SpentChallengeRow | undefined> {
    const [row] = await this.db.query<SpentChallengeRow>(
      `SELECT c.admin_user_id, c.status, s.revoked_at IS NULL AS session_live
       FROM admin_challenges c JOIN admin_sessions s ON s.id = c.session_id WHERE c.token_hash = $1`,
      { bind: [tokenHash], type: QueryTypes.SELECT, transaction },
    );
    return row;
  }
}
