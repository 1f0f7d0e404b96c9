import { timingSafeEqual } from 'node:crypto';
import { ConflictError, NotFoundError, TooManyRequestsError, UnauthorizedError, ValidationError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import type { Agents } from '../agents/agents.js';
import { randomToken, sha256 } from '../admin/secrets.js';
import { MinuteBudget } from '../db/minute-budget.js';
import { ApiKeyStore, type KeyRow } from './api-key-store.js';

/** Every key starts so, to be told apart from administrator tokens (`ahp_`) and found by secret scanners. */
export const PUBLIC_API_KEY_PREFIX = 'ahk_';
/** The header a public Fusion caller sends its key in (spec 5.7). */
export const PUBLIC_API_KEY_HEADER = 'x-agent-api-key';

/** A key as the API shows it: its public prefix and state, never the key. */
function present(row: KeyRow) {
  return {
    key_id: row.id,
    agent_id: row.agent_id,
    label: row.label,
    prefix: row.prefix,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked: row.revoked_at !== null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export type PublicApiKeyView = ReturnType<typeof present>;

/** A key's plaintext: `ahk_`, 12 characters of public prefix, `_`, and 32 random bytes. */
const KEY_SHAPE = /^(ahk_[A-Za-z0-9_-]{12})_[A-Za-z0-9_-]{43}$/;

/**
 * Public API keys of Fusion agents (spec 5.7): made and revoked by administrators (audited), the plaintext shown
 * once and stored as its SHA-256 only. A request's key is found by its public prefix and its hash compared in
 * constant time; every request reads the key's row, so a revocation holds on every instance at once. Requests per key
 * and minute are counted in Postgres, across instances.
 */
export class PublicApiKeys {
  private readonly perKey: MinuteBudget;
  private readonly store: ApiKeyStore;

  constructor(
    private readonly db: Sequelize,
    private readonly agents: Agents,
    requestsPerMinute: number,
  ) {
    this.store = new ApiKeyStore(db);
    this.perKey = new MinuteBudget(
      db,
      'fusion-api-key',
      requestsPerMinute,
      `${requestsPerMinute} requests a minute per API key ([fusion] api_key_requests_per_minute)`,
    );
  }

  async list(agentId: string) {
    await this.agents.get(agentId);
    return { items: (await this.store.ofAgent(agentId)).map(present) };
  }

  /** A new key of a fusion agent, with its plaintext (`api_key`), shown this once. */
  async create(agentId: string, input: { label: string; expires_at?: string | null }, op: Operation) {
    const agent = await this.agents.get(agentId);
    if (agent.agent_type !== 'fusion') {
      throw new ConflictError(`agent ${agentId} is a ${agent.agent_type} agent; public API keys open fusion agents only`, { code: 'AGENT_NOT_FUSION' });
    }
    if (input.expires_at && new Date(input.expires_at).getTime() <= Date.now()) {
      throw new ValidationError([{ loc: ['body', 'expires_at'], msg: 'must be in the future', type: 'value_error' }]);
    }
    const prefix = `${PUBLIC_API_KEY_PREFIX}${randomToken(9)}`;
    const key = `${prefix}_${randomToken(32)}`;
    const row = await this.store.transaction(async (transaction) => {
      const created = await this.store.insert(
        { agentId, label: input.label, prefix, hash: sha256(key), expiresAt: input.expires_at ?? null, createdBy: op.operator.admin_user_id },
        transaction,
      );
      await auditOperation(
        this.db,
        'core.fusion',
        op,
        {
          action: 'agent_public_api_key.create',
          target_type: 'agent_public_api_key',
          target_id: created.id,
          payload: { agent_id: agentId, label: input.label, prefix },
        },
        transaction,
      );
      return created;
    });
    return { ...present(row), api_key: key };
  }

  /** Revokes a key (once: revoking it again changes nothing); it fails on every instance from the next request. */
  async revoke(agentId: string, keyId: string, op: Operation) {
    await this.agents.get(agentId);
    return this.store.transaction(async (transaction) => {
      const row = await this.store.revoke(agentId, keyId, op.operator.admin_user_id, transaction);
      if (!row) throw new NotFoundError(`agent ${agentId} has no public API key ${keyId}`, { code: 'PUBLIC_API_KEY_NOT_FOUND' });
      await auditOperation(
        this.db,
        'core.fusion',
        op,
        { action: 'agent_public_api_key.revoke', target_type: 'agent_public_api_key', target_id: row.id, payload: { agent_id: agentId, prefix: row.prefix } },
        transaction,
      );
      return present(row);
    });
  }

  /**
   * The id of the live key `presented` for `agentId`, after taking one request from its minute's budget: missing,
   * malformed, unknown, another agent's, expired or revoked is a 401 (`PUBLIC_API_KEY_INVALID`), an exhausted budget
   * a 429.
   */
  async authenticate(agentId: string, presented: string | undefined): Promise<string> {
    const refuse = (why: string): never => {
      throw new UnauthorizedError(`${why}; send a live key of this agent in the ${PUBLIC_API_KEY_HEADER} header`, { code: 'PUBLIC_API_KEY_INVALID' });
    };
    if (!presented) return refuse('this agent needs an API key');
    const prefix = KEY_SHAPE.exec(presented)?.[1];
    if (!prefix) return refuse('the API key is malformed');
    const row = await this.store.byPrefix(prefix);
    const matches = row !== undefined && timingSafeEqual(Buffer.from(row.token_hash, 'hex'), Buffer.from(sha256(presented), 'hex'));
    if (!row || !matches || row.agent_id !== agentId) return refuse('the API key is not valid for this agent');
    if (row.revoked_at) return refuse('the API key was revoked');
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) return refuse('the API key has expired');
    const refusal = await this.perKey.take(row.id);
    if (refusal) throw new TooManyRequestsError(refusal.detail, refusal.retryAfterSeconds);
    // last_used_at to the minute: a key in steady use writes once a minute, not once a request.
    if (row.stale_use) await this.store.markUsed(row.id);
    return row.id;
  }
}
