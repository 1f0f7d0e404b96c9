import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError, type SecretsService } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { auditOperation, type Operation } from '../../admin/operation.js';
import type { CredentialCreateInput, CredentialUpdateInput } from './schemas.js';
import { ENCRYPTED_COLUMNS, storedAt } from '../../services/encrypted-columns.js';
import { credentialDestination } from './connection-secrets.js';
import { CredentialStore, type CredentialRow } from './credential-store.js';

const SECRET_COLUMN = ENCRYPTED_COLUMNS[0];

/**
 * MCP credentials (spec 2.7, 5.8): the secret is stored only as AES-256-GCM
 * ciphertext and leaves this class only decrypted for a tool call, never in
 * a response, log or audit (those carry the key names). The scope governs
 * reuse: `shared` credentials serve any server, `server` ones only theirs.
 */
export class McpCredentials {
  private readonly store: CredentialStore;

  constructor(
    /** For the audit rows each write commits with. */
    private readonly db: Sequelize,
    private readonly secrets: SecretsService,
  ) {
    this.store = new CredentialStore(db);
  }

  list(page: { limit: number; cursor?: string }) {
    return this.store.page(page, presentCredential);
  }

  async get(id: string) {
    return presentCredential(await this.find(id));
  }

  async create(input: CredentialCreateInput, op: Operation) {
    const scope = input.scope ?? 'shared';
    const serverId = await this.checkScope(scope, input.mcp_server_id ?? null);
    const id = randomUUID();
    await this.store.transaction(async (transaction) => {
      await this.store.insert(
        id,
        {
          name: input.name,
          description: input.description ?? '',
          scope,
          mcp_server_id: serverId,
          allowed_destinations: input.allowed_destinations ?? [],
          ciphertext: this.encrypt(id, input.secret_payload),
          secret_keys: Object.keys(input.secret_payload),
        },
        op.operator.admin_user_id,
        transaction,
      );
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        {
          action: 'mcp.credential.create',
          target_type: 'mcp_credential',
          target_id: id,
          payload: { name: input.name, scope, mcp_server_id: serverId, secret_keys: Object.keys(input.secret_payload) },
        },
        transaction,
      );
    });
    return this.get(id);
  }

  async update(id: string, input: CredentialUpdateInput, op: Operation) {
    const current = await this.find(id);
    const scope = input.scope ?? current.scope;
    const serverId = await this.checkScope(scope, input.mcp_server_id !== undefined ? input.mcp_server_id : current.mcp_server_id);
    await this.store.transaction(async (transaction) => {
      if (scope === 'server') await this.refuseForeignUsers(id, serverId!, transaction);
      await this.store.update(
        id,
        {
          name: input.name ?? current.name,
          description: input.description ?? current.description,
          scope,
          mcp_server_id: serverId,
          allowed_destinations: input.allowed_destinations ?? current.allowed_destinations,
        },
        transaction,
      );
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.credential.update', target_type: 'mcp_credential', target_id: id, payload: { changed: Object.keys(input) } },
        transaction,
      );
    });
    return this.get(id);
  }

  /** Replaces the secret; the answer names the servers and mounts that use it, to verify again. */
  async rotate(id: string, secretPayload: Record<string, string>, op: Operation) {
    await this.find(id);
    await this.store.transaction(async (transaction) => {
      await this.store.replaceSecret(id, this.encrypt(id, secretPayload), Object.keys(secretPayload), transaction);
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.credential.rotate', target_type: 'mcp_credential', target_id: id, payload: { secret_keys: Object.keys(secretPayload) } },
        transaction,
      );
    });
    const affected = await this.store.uses(id);
    return {
      ...(await this.get(id)),
      servers_to_reverify: [...new Map(affected.map((a) => [a.mcp_server_id, { mcp_server_id: a.mcp_server_id, server_name: a.server_name }])).values()],
      mounts_to_reverify: affected.flatMap((a) =>
        a.mount_id && a.agent_id ? [{ mount_id: a.mount_id, agent_id: a.agent_id, mcp_server_id: a.mcp_server_id }] : [],
      ),
    };
  }

  async delete(id: string, op: Operation) {
    await this.find(id);
    const users = await this.store.users(id);
    if (users.length)
      throw new ConflictError(`credential ${id} is used by ${users.map((s) => `server "${s.name}" (${s.id})`).join(', ')}; detach it there first`, {
        code: 'CREDENTIAL_IN_USE',
      });
    await this.store.transaction(async (transaction) => {
      await this.store.delete(id, transaction);
      await auditOperation(this.db, 'core.mcp', op, { action: 'mcp.credential.delete', target_type: 'mcp_credential', target_id: id }, transaction);
    });
    return { status: 'deleted', credential_id: id };
  }

  /** The decrypted secret for a call by `serverId`, refused when the scope does not allow that server. */
  async secretFor(credentialId: string, server: { id: string; connection_config: Record<string, unknown> }): Promise<Record<string, string>> {
    const row = await this.find(credentialId);
    if (!usableBy(row, server.id))
      throw new ConflictError(`credential ${credentialId} is scoped to server ${row.mcp_server_id} and cannot be used by server ${server.id}`, {
        code: 'CREDENTIAL_SCOPE_MISMATCH',
      });
    refuseDestination(row, server.connection_config);
    return JSON.parse(this.secrets.decrypt(row.encrypted_secret_json, storedAt(SECRET_COLUMN, row.id))) as Record<string, string>;
  }

  /** Refuses attaching a credential to a server its scope does not allow. */
  async checkAttachable(credentialId: string, serverId: string, config: Record<string, unknown>): Promise<void> {
    const row = await this.store.find(credentialId);
    if (!row) throw new ValidationError([{ loc: ['body', 'credential_id'], msg: `credential ${credentialId} not found`, type: 'value_error' }]);
    if (!usableBy(row, serverId))
      throw new ConflictError(`credential ${credentialId} is scoped to server ${row.mcp_server_id}; a server-scoped credential serves only that server`, {
        code: 'CREDENTIAL_SCOPE_MISMATCH',
      });
    refuseDestination(row, config);
  }

  private async find(id: string): Promise<CredentialRow> {
    const row = await this.store.find(id);
    if (!row) throw new NotFoundError(`credential ${id} not found`, { code: 'CREDENTIAL_NOT_FOUND' });
    return row;
  }

  /** Bound to the credential's row: a ciphertext copied to another credential does not decrypt. */
  private encrypt(id: string, payload: Record<string, string>): string {
    return this.secrets.encrypt(JSON.stringify(payload), storedAt(SECRET_COLUMN, id));
  }

  private async checkScope(scope: 'shared' | 'server', serverId: string | null): Promise<string | null> {
    if (scope === 'shared') {
      if (serverId)
        throw new ValidationError([
          { loc: ['body', 'mcp_server_id'], msg: 'a shared credential names no server; use scope "server" to bind it to one', type: 'value_error' },
        ]);
      return null;
    }
    if (!serverId) throw new ValidationError([{ loc: ['body', 'mcp_server_id'], msg: 'scope "server" needs mcp_server_id', type: 'missing' }]);
    if (!(await this.store.serverExists(serverId)))
      throw new ValidationError([{ loc: ['body', 'mcp_server_id'], msg: `MCP server ${serverId} not found`, type: 'value_error' }]);
    return serverId;
  }

  /** Narrowing a credential to one server must not strand other servers that use it. */
  private async refuseForeignUsers(id: string, serverId: string, transaction: Transaction): Promise<void> {
    const others = await this.store.users(id, serverId, transaction);
    if (others.length)
      throw new ConflictError(`credential ${id} is also used by ${others.map((s) => `"${s.name}"`).join(', ')}; it cannot be scoped to one server`, {
        code: 'CREDENTIAL_IN_USE',
      });
  }
}

const usableBy = (row: CredentialRow, serverId: string) => row.scope === 'shared' || row.mcp_server_id === serverId;

/** A credential bound to destinations is never sent elsewhere, whoever repoints the server and whatever they confirm. */
function refuseDestination(row: CredentialRow, config: Record<string, unknown>): void {
  const destination = credentialDestination(config);
  if (row.allowed_destinations.length === 0 || (destination !== null && row.allowed_destinations.includes(destination))) return;
  throw new ConflictError(`credential ${row.id} may be sent only to ${row.allowed_destinations.join(', ')}, not to ${destination ?? 'this server'}`, {
    code: 'CREDENTIAL_DESTINATION_REFUSED',
  });
}

/** Metadata only: the ciphertext and the secret never leave. */
export function presentCredential(row: CredentialRow) {
  return {
    credential_id: row.id,
    name: row.name,
    description: row.description,
    scope: row.scope,
    mcp_server_id: row.mcp_server_id,
    secret_keys: row.secret_keys,
    allowed_destinations: row.allowed_destinations,
    has_secret: true,
    rotated_at: row.rotated_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
