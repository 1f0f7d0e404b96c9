import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Failed-login counters per username and per client address, kept in
 * Postgres so every host instance sees them. `maxFailures` failures lock the
 * key for `lockoutSeconds`; a success clears it.
 */
export class LoginThrottle {
  constructor(
    private readonly db: Sequelize,
    private readonly maxFailures: number,
    private readonly lockoutSeconds: number,
  ) {}

  /** Seconds until the longest lock among `keys` ends; 0 when none is locked. */
  async lockedSeconds(keys: string[]): Promise<number> {
    const [row] = await this.db.query<{ seconds: number | null }>(
      'SELECT ceil(extract(epoch FROM max(locked_until) - now()))::int AS seconds FROM admin_login_throttles WHERE throttle_key = ANY($1) AND locked_until > now()',
      { bind: [keys], type: QueryTypes.SELECT },
    );
    return row?.seconds ?? 0;
  }

  async recordFailure(keys: string[]): Promise<void> {
    for (const key of keys) {
      await this.db.query(
        `INSERT INTO admin_login_throttles (throttle_key, failures, locked_until, updated_at) VALUES ($1, 1, NULL, now())
         ON CONFLICT (throttle_key) DO UPDATE SET
           failures = CASE WHEN admin_login_throttles.failures + 1 >= $2 THEN 0 ELSE admin_login_throttles.failures + 1 END,
           locked_until = CASE WHEN admin_login_throttles.failures + 1 >= $2 THEN now() + make_interval(secs => $3) ELSE admin_login_throttles.locked_until END,
           updated_at = now()`,
        { bind: [key, this.maxFailures, this.lockoutSeconds] },
      );
    }
  }

  async clear(keys: string[]): Promise<void> {
    await this.db.query('DELETE FROM admin_login_throttles WHERE throttle_key = ANY($1)', { bind: [keys] });
  }
}
