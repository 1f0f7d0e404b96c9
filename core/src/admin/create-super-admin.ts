import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError } from '@agent-host/sdk';
import { UniqueConstraintError, type Sequelize } from 'sequelize';
import { AdminStore } from './admin-store.js';
import { insertAudit } from '../services/audit-store.js';
import { hashPassword, randomToken } from './secrets.js';

export const SUPER_ADMIN_PASSWORD_MIN = 12;
/** The login endpoint accepts passwords up to this length. */
export const SUPER_ADMIN_PASSWORD_MAX = 1024;

export interface CreatedSuperAdmin {
  admin_user_id: string;
  username: string;
  /** Set when no password was given: shown once, stored only as an argon2id hash. */
  generatedPassword?: string;
}

const taken = (username: string) => new ConflictError(`administrator "${username}" already exists; choose another username`, { code: 'ADMIN_USER_EXISTS' });

/**
 * Creates a super admin (`agent-host admin create-super-admin`): the user row
 * (argon2id hash) and its success audit record commit in one transaction.
 * Refuses a username that exists in any letter case. Without `password`, one is
 * generated and returned to be shown once.
 */
export async function createSuperAdmin(db: Sequelize, input: { username: string; password?: string }): Promise<CreatedSuperAdmin> {
  const username = input.username.trim();
  if (!username || username.length > 120 || !/^[\w.@-]+$/.test(username)) {
    throw new BadRequestError('username must be 1-120 characters: letters, digits, _ . @ -');
  }
  const generatedPassword = input.password ? undefined : randomToken(15);
  const password = input.password || generatedPassword!;
  if (password.length < SUPER_ADMIN_PASSWORD_MIN || password.length > SUPER_ADMIN_PASSWORD_MAX) {
    throw new BadRequestError(`password must be ${SUPER_ADMIN_PASSWORD_MIN}-${SUPER_ADMIN_PASSWORD_MAX} characters`);
  }
  const store = new AdminStore(db);
  if (await store.usernameTaken(username)) throw taken(username);
  const id = randomUUID();
  const passwordHash = await hashPassword(password);
  try {
    await store.transaction(async (transaction) => {
      await store.insertUser({ id, username, display_name: username, role_code: 'super_admin', is_protected: false, password_hash: passwordHash }, transaction);
      await insertAudit(
        db,
        'core.admin',
        {
          action: 'admin_user.create',
          outcome: 'success',
          actor_id: 'cli',
          target_type: 'admin_user',
          target_id: id,
          payload: { username, role_code: 'super_admin', via: 'cli' },
        },
        { transaction },
      );
    });
  } catch (error) {
    // Another process took the name between the check and the insert.
    if (error instanceof UniqueConstraintError) throw taken(username);
    throw error;
  }
  return { admin_user_id: id, username, ...(generatedPassword && { generatedPassword }) };
}
