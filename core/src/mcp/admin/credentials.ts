import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError, type SecretsService } from '@agent-host/sdk';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { newestFirst } from '../../db/keyset-cursor.js';
import type { CredentialCreateInput, CredentialUpdateInput } from './schemas.js';
import { ENCRYPTED_COLUMNS, storedAt } from '../../services/encrypted-columns.js';
import { credentialDestination } from './connection-secrets.js';

const SECRET_COLUMN = ENCRYPTED_COLUMNS[0];

export interface CredentialRow {
  id: string;
  name: string;
  description: string;
  scope: 'shared' | 'server';
  mcp_server_id: string | null;
  encrypted_secret_json: string;
  secret_keys: string[];
  allowed_destinations: string[];
  rotated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * MCP credentials (spec 2.7, 5.8): the secret is stored only as AES-256-GCM
 * ciphertext and leaves this class only decrypted for a tool call, never in
 * a response, log or audit (those carry the key names). The scope governs
 * reuse: `shared` credentials serve any server, `server` ones only theirs.
 */
export class McpCredentials {
  constructor(
    private readonly db: Sequelize,
    private readonly secrets: SecretsService,
  ) {}

  list(page: { limit: number; cursor?: string }) {
    return newestFirst(this.db, { from: 'mcp_credentials', where: 'true', bind: [] }, page, presentCredential);
  }

  async get(id: string) {
    return presentCredential(await this.find(id));
  }

  async create(input: CredentialCreateInput, op: Operation) {
    const scope = input.scope ?? 'shared';
    const serverId = await this.checkScope(scope, input.mcp_server_id ?? null);
    const id = randomUUID();
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `INSERT INTO mcp_credentials (id, name, description, scope, mcp_server_id, encrypted_secret_json, secret_keys, allowed_destinations, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())`,
        {
          bind: [
            id,
            input.name,
            input.description ?? '',
            scope,
            serverId,
            this.encrypt(id, input.secret_payload),
            JSON.stringify(Object.keys(input.secret_payload)),
            JSON.stringify(input.allowed_destinations ?? []),
            op.operator.admin_user_id,
          ],
          transaction,
        },
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
    await this.db.transaction(async (transaction) => {
      if (scope === 'server') await this.refuseForeignUsers(id, serverId!, transaction);
      await this.db.query(
        'UPDATE mcp_credentials SET name = $2, description = $3, scope = $4, mcp_server_id = $5, allowed_destinations = $6, updated_at = now() WHERE id = $1',
        {
          bind: [
            id,
            input.name ?? current.name,
            input.description ?? current.description,
            scope,
            serverId,
            JSON.stringify(input.allowed_destinations ?? current.allowed_destinations),
          ],
          transaction,
        },
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
    await this.db.transaction(async (transaction) => {
      await this.db.query('UPDATE mcp_credentials SET encrypted_secret_json = $2, secret_keys = $3, rotated_at = now(), updated_at = now() WHERE id = $1', {
        bind: [id, this.encrypt(id, secretPayload), JSON.stringify(Object.keys(secretPayload))],
        transaction,
      });
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        { action: 'mcp.credential.rotate', target_type: 'mcp_credential', target_id: id, payload: { secret_keys: Object.keys(secretPayload) } },
        transaction,
      );
    });
    const affected = await this.db.query<{ mcp_server_id: string; server_name: string; mount_id: string | null; agent_id: string | null }>(
      `SELECT s.id AS mcp_server_id, s.name AS server_name, m.id AS mount_id, m.agent_id FROM mcp_servers s
       LEFT JOIN agent_mcp_mounts m ON m.mcp_server_id = s.id WHERE s.credential_id = $1 ORDER BY s.name, m.created_at`,
      { bind: [id], type: QueryTypes.SELECT },
    );
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
    const users = await this.db.query<{ id: string; name: string }>('SELECT id, name FROM mcp_servers WHERE credential_id = $1 ORDER BY name', {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    if (users.length)
      throw new ConflictError(`credential ${id} is used by ${users.map((s) => `server "${s.name}" (${s.id})`).join(', ')}; detach it there first`, {
        code: 'CREDENTIAL_IN_USE',
      });
    await this.db.transaction(async (transaction) => {
      await this.db.query('DELETE FROM mcp_credentials WHERE id = $1', { bind: [id], transaction });
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
    const [row] = await this.db.query<CredentialRow>('SELECT * FROM mcp_credentials WHERE id = try_uuid($1)', {
      bind: [credentialId],
      type: QueryTypes.SELECT,
    });
    if (!row) throw new ValidationError([{ loc: ['body', 'credential_id'], msg: `credential ${credentialId} not found`, type: 'value_error' }]);
    if (!usableBy(row, serverId))
      throw new ConflictError(`credential ${credentialId} is scoped to server ${row.mcp_server_id}; a server-scoped credential serves only that server`, {
        code: 'CREDENTIAL_SCOPE_MISMATCH',
      });
    refuseDestination(row, config);
  }

  private async find(id: string): Promise<CredentialRow> {
    const [row] = await this.db.query<CredentialRow>('SELECT * FROM mcp_credentials WHERE id = try_uuid($1)', { bind: [id], type: QueryTypes.SELECT });
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
    const [server] = await this.db.query('SELECT 1 FROM mcp_servers WHERE id = try_uuid($1)', { bind: [serverId], type: QueryTypes.SELECT });
    if (!server) throw new ValidationError([{ loc: ['body', 'mcp_server_id'], msg: `MCP server ${serverId} not found`, type: 'value_error' }]);
    return serverId;
  }

  /** Narrowing a credential to one server must not strand other servers that use it. */
  private async refuseForeignUsers(id: string, serverId: string, transaction: Transaction): Promise<void> {
    const others = await this.db.query<{ name: string }>('SELECT name FROM mcp_servers WHERE credential_id = $1 AND id <> $2', {
      bind: [id, serverId],
      type: QueryTypes.SELECT,
      transaction,
    });
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
