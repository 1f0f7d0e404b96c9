import { randomUUID } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '@agent-host/sdk';
import { UniqueConstraintError, type Transaction } from 'sequelize';
import type { AdminAuth, AdminPrincipal, RequestOrigin } from './admin-auth.js';
import type { Challenges } from './challenges.js';
import { isPermissionCode, type RoleCode } from './permissions.js';
import { hashPassword } from './secrets.js';
import type { AdminStore, UserRow } from './admin-store.js';

/** What an operator asked for, with the credentials of the request. */
interface Operation {
  operator: AdminPrincipal;
  origin: RequestOrigin;
  challengeToken: string | undefined;
}

/**
 * Administrator users and their grants (spec 4.5) with every guard of 5.5.
 * Each write, the challenge it spends and its audit record commit in one
 * transaction; a refused operation is audited as a failure.
 */
export class AdminUsers {
  private readonly store: AdminStore;

  constructor(
    private readonly auth: AdminAuth,
    private readonly challenges: Challenges,
    /** `[admin] sub_admins_manage_permissions`. */
    private readonly subAdminsManagePermissions: boolean,
  ) {
    this.store = auth.store;
  }

  async list(options: { limit: number; cursor?: string }) {
    const rows = await this.store.users(options.cursor ?? null, options.limit);
    const page = rows.slice(0, options.limit);
    return {
      items: await Promise.all(page.map((row) => this.present(row))),
      next_cursor: rows.length > options.limit ? page.at(-1)!.username.toLowerCase() : null,
      limit: options.limit,
    };
  }

  async get(id: string) {
    return this.present(await this.find(id));
  }

  /** Creates a `sub_admin`; initial grants need `admin_permissions.write` and a challenge. */
  async create(input: { username: string; password: string; display_name?: string; permission_codes: string[] }, op: Operation) {
    const codes = this.checkCodes(input.permission_codes);
    if (codes.length && !op.operator.permissions.includes('admin_permissions.write')) {
      await this.refuse(op, 'admin_user.create', undefined, 'missing_admin_permissions_write');
      throw new ForbiddenError('initial permissions need admin_permissions.write', { code: 'PERMISSION_NOT_HELD' });
    }
    if (codes.length) await this.refuseEscalation(op, 'admin_user.create', undefined, codes);
    const id = randomUUID();
    const passwordHash = await hashPassword(input.password);
    try {
      await this.store.transaction(async (transaction) => {
        if (codes.length) await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
        await this.store.insertUser(
          {
            id,
            username: input.username,
            display_name: input.display_name ?? input.username,
            role_code: 'sub_admin',
            is_protected: false,
            password_hash: passwordHash,
          },
          transaction,
        );
        await this.insertGrants(id, codes, op.operator, transaction);
        await this.success(op, 'admin_user.create', id, { username: input.username, permission_codes: codes }, transaction);
      });
    } catch (error) {
      if (error instanceof UniqueConstraintError)
        throw new ConflictError(`an administrator named "${input.username}" already exists`, { code: 'ADMIN_USER_EXISTS' });
      throw error;
    }
    return this.get(id);
  }

  /** Profile update; `role_code` / `status` only by a `super_admin`, with a challenge, and never on oneself. */
  async update(id: string, input: { display_name?: string; role_code?: RoleCode; status?: 'active' | 'disabled' }, op: Operation) {
    const target = await this.find(id);
    await this.requireSuperAdminForSuperAdminTarget(target, op, 'admin_user.update');
    const governance =
      (input.role_code !== undefined && input.role_code !== target.role_code) || (input.status !== undefined && input.status !== target.status);
    if (governance) {
      if (target.id === op.operator.admin_user_id) {
        await this.refuse(op, 'admin_user.update', id, 'self_role_or_status_change');
        throw new ForbiddenError('you cannot change your own role_code or status', { code: 'SELF_CHANGE_REFUSED' });
      }
      if (op.operator.role_code !== 'super_admin') {
        await this.refuse(op, 'admin_user.update', id, 'role_or_status_change_needs_super_admin');
        throw new ForbiddenError('only a super_admin can change role_code or status', { code: 'SUPER_ADMIN_REQUIRED' });
      }
    }
    await this.store.transaction(async (transaction) => {
      if (governance) await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
      await this.store.updateUser(id, input, transaction);
      if (input.status === 'disabled' || (input.role_code && input.role_code !== target.role_code)) {
        await this.revokeSessions(id, 'account_changed', transaction);
      }
      await this.success(op, 'admin_user.update', id, { changed: Object.keys(input) }, transaction);
    });
    return this.get(id);
  }

  /** Needs a challenge; a `super_admin` target only by a `super_admin`; a protected one only by break-glass. */
  async delete(id: string, op: Operation): Promise<void> {
    const target = await this.find(id);
    await this.requireSuperAdminForSuperAdminTarget(target, op, 'admin_user.delete');
    await this.refuseStrongerTarget(target, op, 'admin_user.delete');
    if (target.id === op.operator.admin_user_id) {
      await this.refuse(op, 'admin_user.delete', id, 'self_delete');
      throw new ForbiddenError('you cannot delete yourself', { code: 'SELF_CHANGE_REFUSED' });
    }
    if (target.is_protected) {
      await this.refuse(op, 'admin_user.delete', id, 'protected');
      throw new ConflictError('this super admin is protected; use break-glass-delete with a reason', { code: 'PROTECTED_SUPER_ADMIN' });
    }
    await this.remove(target, op, 'admin_user.delete', {});
  }

  /** Deletes a protected super admin: a `super_admin` operator, a challenge and a reason. */
  async breakGlassDelete(id: string, reason: string, op: Operation): Promise<void> {
    const target = await this.find(id);
    if (!target.is_protected || target.role_code !== 'super_admin') {
      await this.refuse(op, 'admin_user.break_glass_delete', id, 'not_protected');
      throw new ConflictError('break-glass delete is only for protected super admins; use DELETE', { code: 'CONFLICT' });
    }
    await this.requireSuperAdminForSuperAdminTarget(target, op, 'admin_user.break_glass_delete');
    if (target.id === op.operator.admin_user_id) {
      await this.refuse(op, 'admin_user.break_glass_delete', id, 'self_delete');
      throw new ForbiddenError('you cannot delete yourself', { code: 'SELF_CHANGE_REFUSED' });
    }
    await this.remove(target, op, 'admin_user.break_glass_delete', { reason });
  }

  /** Batch grant to a `sub_admin`; needs a challenge; nobody grants to themselves. */
  async grant(id: string, permissionCodes: string[], op: Operation) {
    const target = await this.find(id);
    const codes = this.checkCodes(permissionCodes);
    if (target.id === op.operator.admin_user_id) {
      await this.refuse(op, 'admin_permission.grant', id, 'self_grant', { permission_codes: codes });
      throw new ForbiddenError('you cannot grant permissions to yourself', { code: 'SELF_CHANGE_REFUSED' });
    }
    if (target.role_code !== 'sub_admin') {
      await this.refuse(op, 'admin_permission.grant', id, 'target_not_sub_admin');
      throw new ConflictError('permissions are granted to sub_admin users only; a super_admin holds them all', { code: 'GRANT_REFUSED' });
    }
    await this.refuseEscalation(op, 'admin_permission.grant', id, codes);
    await this.store.transaction(async (transaction) => {
      await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
      const added = await this.insertGrants(id, codes, op.operator, transaction);
      await this.success(op, 'admin_permission.grant', id, { permission_codes: added }, transaction);
    });
    return this.get(id);
  }

  /** Revokes one grant; needs a challenge. */
  async revokeGrant(id: string, grantId: string, op: Operation) {
    const target = await this.find(id);
    await this.refuseEscalation(op, 'admin_permission.revoke', id, []);
    await this.refuseStrongerTarget(target, op, 'admin_permission.revoke');
    await this.store.transaction(async (transaction) => {
      await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
      const permissionCode = await this.store.revokeGrant(id, grantId, transaction);
      if (!permissionCode) throw new NotFoundError(`no active grant ${grantId} on this administrator`, { code: 'GRANT_NOT_FOUND' });
      await this.success(op, 'admin_permission.revoke', id, { grant_id: grantId, permission_code: permissionCode }, transaction);
    });
    return this.get(id);
  }

  /** Sets a new password and revokes every session of the target; needs a challenge. */
  async resetPassword(id: string, newPassword: string, op: Operation): Promise<void> {
    const target = await this.find(id);
    await this.requireSuperAdminForSuperAdminTarget(target, op, 'admin_user.password_reset');
    await this.refuseStrongerTarget(target, op, 'admin_user.password_reset');
    const passwordHash = await hashPassword(newPassword);
    await this.store.transaction(async (transaction) => {
      await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
      await this.store.setPassword(id, passwordHash, transaction);
      await this.revokeSessions(id, 'password_reset', transaction);
      await this.success(op, 'admin_user.password_reset', id, {}, transaction);
    });
  }

  private async remove(target: UserRow, op: Operation, action: string, payload: Record<string, unknown>): Promise<void> {
    await this.store.transaction(async (transaction) => {
      await this.challenges.consume(op.challengeToken, op.operator, op.origin, transaction);
      if (target.role_code === 'super_admin') {
        if (!(await this.store.otherActiveSuperAdmin(target.id, transaction)))
          throw new ConflictError('the last active super admin cannot be deleted', { code: 'LAST_SUPER_ADMIN' });
      }
      await this.store.deleteUser(target.id, transaction);
      await this.success(op, action, target.id, { username: target.username, ...payload }, transaction);
    });
  }

  /**
   * A sub admin manages permissions only where `[admin] sub_admins_manage_permissions` allows it, and grants only
   * codes it holds itself: otherwise `admin_permissions.write` would be every permission.
   */
  private async refuseEscalation(op: Operation, action: string, targetId: string | undefined, codes: string[]): Promise<void> {
    if (op.operator.role_code === 'super_admin') return;
    if (!this.subAdminsManagePermissions) {
      await this.refuse(op, action, targetId, 'permissions_managed_by_super_admins');
      throw new ForbiddenError('on this host only super admins grant and revoke permissions ([admin] sub_admins_manage_permissions)', {
        code: 'SUPER_ADMIN_REQUIRED',
      });
    }
    const notHeld = codes.filter((code) => !op.operator.permissions.includes(code));
    if (notHeld.length) {
      await this.refuse(op, action, targetId, 'grant_beyond_own_permissions', { permission_codes: notHeld });
      throw new ForbiddenError(`you can grant only permissions you hold; you do not hold ${notHeld.join(', ')}`, { code: 'PERMISSION_NOT_HELD' });
    }
  }

  /** A sub admin acts on another administrator (reset, delete, revoke) only when it holds every permission the target holds. */
  private async refuseStrongerTarget(target: UserRow, op: Operation, action: string): Promise<void> {
    if (op.operator.role_code === 'super_admin') return;
    const beyond = (await this.auth.permissionsOf(target.id, target.role_code)).filter((code) => !op.operator.permissions.includes(code));
    if (beyond.length) {
      await this.refuse(op, action, target.id, 'target_holds_more', { permission_codes: beyond });
      throw new ForbiddenError(`this administrator holds permissions you do not (${beyond.join(', ')}); only an administrator holding them all may do this`, {
        code: 'PERMISSION_NOT_HELD',
      });
    }
  }

  private async requireSuperAdminForSuperAdminTarget(target: UserRow, op: Operation, action: string): Promise<void> {
    if (target.role_code === 'super_admin' && op.operator.role_code !== 'super_admin') {
      await this.refuse(op, action, target.id, 'super_admin_target_needs_super_admin');
      throw new ForbiddenError('only a super_admin can change, delete or reset a super_admin', { code: 'SUPER_ADMIN_REQUIRED' });
    }
  }

  private checkCodes(codes: string[]): string[] {
    const unknown = codes.filter((code) => !isPermissionCode(code));
    if (unknown.length) {
      throw new ValidationError(
        unknown.map((code) => ({ loc: ['body', 'permission_codes'], msg: `unknown permission "${code}"`, type: 'unknown_permission' })),
      );
    }
    return [...new Set(codes)];
  }

  /** Adds grants not already active; resolves with the codes added. */
  private async insertGrants(adminUserId: string, codes: string[], operator: AdminPrincipal, transaction: Transaction): Promise<string[]> {
    const added: string[] = [];
    for (const code of codes) if (await this.store.insertGrant(adminUserId, code, operator.admin_user_id, transaction)) added.push(code);
    return added;
  }

  private revokeSessions(adminUserId: string, reason: string, transaction: Transaction): Promise<void> {
    return this.store.revokeSessionsOf(adminUserId, reason, transaction);
  }

  private async find(id: string): Promise<UserRow> {
    const row = await this.store.user(id);
    if (!row) throw new NotFoundError(`administrator ${id} not found`, { code: 'ADMIN_USER_NOT_FOUND' });
    return row;
  }

  private async present(row: UserRow) {
    const grants = await this.store.activeGrants(row.id);
    return {
      admin_user_id: row.id,
      username: row.username,
      display_name: row.display_name,
      role_code: row.role_code,
      status: row.status,
      is_protected: row.is_protected,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      last_login_at: row.last_login_at?.toISOString() ?? null,
      grants: grants.map((g) => ({ grant_id: g.id, permission_code: g.permission_code, granted_by: g.granted_by, created_at: g.created_at.toISOString() })),
      effective_permissions: await this.auth.permissionsOf(row.id, row.role_code),
    };
  }

  private success(op: Operation, action: string, targetId: string, payload: Record<string, unknown>, transaction: Transaction): Promise<void> {
    return this.auth.audit(
      { action, outcome: 'success', actor_id: op.operator.admin_user_id, target_type: 'admin_user', target_id: targetId, payload },
      op.origin,
      transaction,
    );
  }

  private refuse(op: Operation, action: string, targetId: string | undefined, reason: string, payload: Record<string, unknown> = {}): Promise<void> {
    return this.auth.audit(
      {
        action,
        outcome: 'failure',
        actor_id: op.operator.admin_user_id,
        target_type: 'admin_user',
        ...(targetId && { target_id: targetId }),
        payload: { reason, ...payload },
      },
      op.origin,
    );
  }
}
