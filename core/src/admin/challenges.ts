import { randomUUID } from 'node:crypto';
import { ForbiddenError, NotFoundError, TooManyRequestsError } from '@agent-host/sdk';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize, Transaction } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import type { AdminAuth, AdminPrincipal, RequestOrigin } from './admin-auth.js';
import { ChallengeStore } from './challenge-store.js';
import { randomToken, sha256, verifyPassword } from './secrets.js';

/** Why an API token never reaches a sensitive operation. */
const TOKENS_TAKE_NO_CHALLENGES = 'sensitive operations need a browser session and a challenge (password re-entry); API tokens cannot take challenges';

const CREATIONS_PER_MINUTE = 30;

/**
 * One-time challenges for sensitive operations (spec 3.5, 5.4): create, verify
 * with the password, then spend the short-lived token once, in the same
 * transaction as the change it authorises.
 */
export class Challenges {
  /** Challenges one session may ask for per minute: each is a chance to guess the password. */
  private readonly creations: RateLimiterPostgres;
  private readonly store: ChallengeStore;

  constructor(
    db: Sequelize,
    private readonly auth: AdminAuth,
    private readonly config: HostConfig['admin'],
  ) {
    this.store = new ChallengeStore(db);
    this.creations = new RateLimiterPostgres({
      storeClient: db,
      storeType: 'sequelize',
      tableName: 'rate_limit_buckets',
      tableCreated: true,
      keyPrefix: 'challenge-create',
      points: CREATIONS_PER_MINUTE,
      duration: 60,
    });
  }

  async create(principal: AdminPrincipal, origin: RequestOrigin) {
    if (principal.api_token_id) throw new ForbiddenError(TOKENS_TAKE_NO_CHALLENGES, { code: 'CHALLENGE_REQUIRED' });
    try {
      await this.creations.consume(principal.session_id);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const retryAfter = Math.ceil(error.msBeforeNext / 1000);
      throw new TooManyRequestsError(`too many challenges: at most ${CREATIONS_PER_MINUTE} a minute per session; try again in ${retryAfter} s`, retryAfter, {
        code: 'TOO_MANY_CHALLENGES',
      });
    }
    const id = randomUUID();
    const nonce = randomToken(16);
    const expiresAt = await this.store.insert({
      id,
      adminUserId: principal.admin_user_id,
      sessionId: principal.session_id,
      nonce,
      ttlSeconds: this.config.challenge_ttl_seconds,
    });
    await this.auth.audit(
      { action: 'auth.challenge.create', outcome: 'success', actor_id: principal.admin_user_id, target_type: 'admin_challenge', target_id: id },
      origin,
    );
    return { challenge_id: id, nonce, expires_at: expiresAt.toISOString() };
  }

  /** Password re-entry. Any failure burns the challenge: the client must ask for a new one. */
  async verify(challengeId: string, nonce: string, password: string, principal: AdminPrincipal, origin: RequestOrigin) {
    const fail = async (reason: string, message: string): Promise<never> => {
      await this.store.burn(challengeId);
      await this.auth.audit(
        {
          action: 'auth.challenge.verify',
          outcome: 'failure',
          actor_id: principal.admin_user_id,
          target_type: 'admin_challenge',
          target_id: challengeId,
          payload: { reason },
        },
        origin,
      );
      throw new ForbiddenError(message, { code: 'CHALLENGE_REFUSED' });
    };
    const row = await this.store.forVerify(challengeId);
    if (!row || row.admin_user_id !== principal.admin_user_id) throw new NotFoundError('challenge not found', { code: 'CHALLENGE_NOT_FOUND' });
    if (row.status !== 'pending') return fail('not_pending', `challenge is ${row.status}; request a new one`);
    if (row.expired) return fail('expired', 'challenge expired; request a new one');
    if (row.nonce !== nonce) return fail('nonce_mismatch', 'challenge verification failed; the challenge is burned, request a new one');
    // A verify is a password guess, counted with logins: past the attempts the session that guesses is ended.
    const throttled = await this.auth.throttle.reserve(principal.username, origin.clientIp);
    if (throttled) {
      await this.auth.store.revokeSession(principal.session_id, 'challenge_failures');
      await this.auth.audit(
        {
          action: 'auth.challenge.verify',
          outcome: 'denied',
          actor_id: principal.admin_user_id,
          target_type: 'admin_challenge',
          target_id: challengeId,
          payload: { reason: 'too_many_failures' },
        },
        origin,
      );
      throw new TooManyRequestsError('too many failed password checks: this session is ended; log in again', throttled.retryAfterSeconds, {
        code: 'TOO_MANY_LOGIN_FAILURES',
      });
    }
    if (!(await verifyPassword(row.password_hash, password))) {
      await this.auth.throttle.failed(principal.username);
      return fail('wrong_password', 'challenge verification failed; the challenge is burned, request a new one');
    }
    await this.auth.throttle.succeeded(principal.username, origin.clientIp);
    const token = randomToken();
    const tokenExpiresAt = await this.store.verify(challengeId, sha256(token), this.config.challenge_token_ttl_seconds);
    if (!tokenExpiresAt) return fail('raced', 'challenge was already used; request a new one');
    await this.auth.audit(
      { action: 'auth.challenge.verify', outcome: 'success', actor_id: principal.admin_user_id, target_type: 'admin_challenge', target_id: challengeId },
      origin,
    );
    return { challenge_token: token, expires_at: tokenExpiresAt.toISOString() };
  }

  /**
   * Spends a challenge token inside `transaction`; refuses a missing, stale,
   * used, revoked or foreign token with a detail that says which. A refusal
   * is audited on its own connection: the caller's transaction rolls back.
   */
  async consume(token: string | undefined, principal: AdminPrincipal, origin: RequestOrigin, transaction: Transaction): Promise<void> {
    const refuse = async (reason: string, message: string): Promise<never> => {
      await this.auth.audit(
        { action: 'auth.challenge.consume', outcome: 'failure', actor_id: principal.admin_user_id, target_type: 'admin_challenge', payload: { reason } },
        origin,
      );
      throw new ForbiddenError(message, { code: reason === 'challenge_missing' || reason === 'api_token' ? 'CHALLENGE_REQUIRED' : 'CHALLENGE_REFUSED' });
    };
    if (principal.api_token_id) return refuse('api_token', TOKENS_TAKE_NO_CHALLENGES);
    if (!token) return refuse('challenge_missing', 'challenge required: send x-admin-challenge-token from a verified challenge');
    if (await this.store.spend(sha256(token), principal.admin_user_id, transaction)) return;
    const row = await this.store.byToken(sha256(token), transaction);
    if (!row) return refuse('challenge_invalid', 'challenge token is not valid');
    if (row.admin_user_id !== principal.admin_user_id) return refuse('challenge_foreign', 'challenge token belongs to another administrator');
    if (row.status === 'used') return refuse('challenge_used', 'challenge token was already used; request a new challenge');
    if (!row.session_live) return refuse('challenge_revoked', 'challenge token was revoked with its session; request a new challenge');
    return refuse('challenge_stale', 'challenge token is stale; request a new challenge');
  }
}
