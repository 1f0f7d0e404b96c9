import { z } from 'zod';
import { pageOf, pagingFields, statusOf, timestamp } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const password = z.string().min(12, 'at least 12 characters').max(1024);
const createBody = z
  .object({
    username: z
      .string()
      .trim()
      .min(1)
      .max(120)
      .regex(/^[\w.@-]+$/, 'letters, digits, _ . @ - only'),
    password,
    display_name: z.string().trim().max(200).optional(),
    permission_codes: z.array(z.string()).default([]),
  })
  .strict();
const updateBody = z
  .object({
    display_name: z.string().trim().max(200).optional(),
    role_code: z.enum(['super_admin', 'sub_admin']).optional(),
    status: z.enum(['active', 'disabled']).optional(),
  })
  .strict();
const grantBody = z.object({ permission_codes: z.array(z.string()).min(1) }).strict();
const breakGlassBody = z.object({ reason: z.string().trim().min(10, 'say why, in at least 10 characters').max(2000) }).strict();
const resetBody = z.object({ new_password: password }).strict();
const listQuery = z.object(pagingFields).strict();

const adminUser = z
  .object({
    admin_user_id: z.string().uuid(),
    username: z.string(),
    display_name: z.string(),
    role_code: z.enum(['super_admin', 'sub_admin']),
    status: z.enum(['active', 'disabled']),
    is_protected: z.boolean().describe('A protected super admin is deleted only by break-glass-delete'),
    created_at: timestamp,
    updated_at: timestamp,
    last_login_at: timestamp.nullable(),
    grants: z.array(z.object({ grant_id: z.string().uuid(), permission_code: z.string(), granted_by: z.string().uuid().nullable(), created_at: timestamp })),
    effective_permissions: z.array(z.string()),
  })
  .meta({ id: 'AdminUser' });

export const adminUserRoutes: RouteFactory<'adminUsers'> = (domains) => {
  const id = (params: Record<string, string>) => String(params.admin_user_id);
  return [
    route({
      method: 'get',
      path: '/admin/admin-users',
      access: { permission: 'admin_users.read' },
      summary: 'List administrators by username',
      query: listQuery,
      success: { status: 200, description: 'A page of administrators', schema: pageOf(adminUser) },
      handler: async (_req, _res, { query }) => domains.adminUsers.list(query),
    }),
    route({
      method: 'post',
      path: '/admin/admin-users',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Create a sub_admin; initial permission_codes need admin_permissions.write and a challenge',
      success: { status: 201, description: 'The new administrator', schema: adminUser },
      refusals: {
        403: 'Initial permissions without admin_permissions.write, or beyond your own (PERMISSION_NOT_HELD)',
        409: 'The username is taken (ADMIN_USER_EXISTS)',
      },
      body: createBody,
      handler: async (_req, res, { operation, challengeToken, body }) => {
        res.status(201);
        return domains.adminUsers.create(body, { ...operation, challengeToken });
      },
    }),
    route({
      method: 'get',
      path: '/admin/admin-users/:admin_user_id',
      access: { permission: 'admin_users.read' },
      summary: 'One administrator with grants and effective permissions',
      success: { status: 200, description: 'The administrator', schema: adminUser },
      handler: async (req) => domains.adminUsers.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/admin/admin-users/:admin_user_id',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Update the profile; role_code/status only by a super_admin with a challenge, never on oneself',
      body: updateBody,
      success: { status: 200, description: 'The administrator as changed', schema: adminUser },
      refusals: { 403: "A change of one's own role or status (SELF_CHANGE_REFUSED), or by a sub_admin (SUPER_ADMIN_REQUIRED)" },
      handler: async (req, _res, { operation, challengeToken, body }) => domains.adminUsers.update(id(req.params), body, { ...operation, challengeToken }),
    }),
    route({
      method: 'del',
      path: '/admin/admin-users/:admin_user_id',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Delete an administrator (a super_admin target only by a super_admin)',
      success: { status: 200, description: 'Deleted', schema: statusOf('deleted') },
      refusals: {
        403: 'Deleting oneself (SELF_CHANGE_REFUSED), a super_admin as a sub_admin (SUPER_ADMIN_REQUIRED), or a stronger administrator (PERMISSION_NOT_HELD)',
        409: 'A protected super admin (PROTECTED_SUPER_ADMIN), or the last active one (LAST_SUPER_ADMIN)',
      },
      handler: async (req, _res, { operation, challengeToken }) => {
        await domains.adminUsers.delete(id(req.params), { ...operation, challengeToken });
        return { status: 'deleted' };
      },
    }),
    route({
      method: 'post',
      path: '/admin/admin-users/:admin_user_id/break-glass-delete',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Delete a protected super admin, with a reason',
      body: breakGlassBody,
      success: { status: 200, description: 'Deleted', schema: statusOf('deleted') },
      refusals: {
        403: 'Deleting oneself (SELF_CHANGE_REFUSED) or not a super_admin (SUPER_ADMIN_REQUIRED)',
        409: 'The target is not a protected super admin (CONFLICT), or the last active one (LAST_SUPER_ADMIN)',
      },
      handler: async (req, _res, { operation, challengeToken, body }) => {
        await domains.adminUsers.breakGlassDelete(id(req.params), body.reason, { ...operation, challengeToken });
        return { status: 'deleted' };
      },
    }),
    route({
      method: 'post',
      path: '/admin/admin-users/:admin_user_id/permissions',
      access: { permission: 'admin_permissions.write', challenge: true },
      summary: 'Grant permissions to a sub_admin (never to oneself)',
      body: grantBody,
      success: { status: 200, description: 'The administrator with the new grants', schema: adminUser },
      refusals: {
        403: 'Granting to oneself (SELF_CHANGE_REFUSED), permissions you do not hold (PERMISSION_NOT_HELD), or sub_admins may not manage permissions here (SUPER_ADMIN_REQUIRED)',
        409: 'The target is a super_admin, who holds every permission (GRANT_REFUSED)',
      },
      handler: async (req, _res, { operation, challengeToken, body }) =>
        domains.adminUsers.grant(id(req.params), body.permission_codes, { ...operation, challengeToken }),
    }),
    route({
      method: 'del',
      path: '/admin/admin-users/:admin_user_id/permissions/:grant_id',
      access: { permission: 'admin_permissions.write', challenge: true },
      summary: 'Revoke one grant',
      success: { status: 200, description: 'The administrator without the grant', schema: adminUser },
      refusals: {
        403: 'The target holds permissions you do not (PERMISSION_NOT_HELD)',
        404: 'No such administrator (ADMIN_USER_NOT_FOUND), or no active grant with this id (GRANT_NOT_FOUND)',
      },
      handler: async (req, _res, { operation, challengeToken }) =>
        domains.adminUsers.revokeGrant(id(req.params), String(req.params.grant_id), { ...operation, challengeToken }),
    }),
    route({
      method: 'post',
      path: '/admin/admin-users/:admin_user_id/password-reset',
      access: { permission: 'admin_users.write', challenge: true },
      summary: "Set a new password and revoke the target's sessions",
      body: resetBody,
      success: { status: 200, description: 'The password is set; every session of the target is revoked', schema: statusOf('password_reset') },
      refusals: { 403: 'A super_admin target as a sub_admin (SUPER_ADMIN_REQUIRED) or a stronger target (PERMISSION_NOT_HELD)' },
      handler: async (req, _res, { operation, challengeToken, body }) => {
        await domains.adminUsers.resetPassword(id(req.params), body.new_password, { ...operation, challengeToken });
        return { status: 'password_reset' };
      },
    }),
  ];
};
