import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const password = z.string().min(12, 'at least 12 characters').max(1024);
const createBody = z
  .object({
    username: z.string().trim().min(1).max(120).regex(/^[\w.@-]+$/, 'letters, digits, _ . @ - only'),
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

export const adminUserRoutes: RouteFactory = (app) => {
  const users = app.adminUsers!;
  const id = (params: Record<string, string>) => String(params.admin_user_id);
  return [
    route({
      method: 'get',
      path: '/admin/admin-users',
      access: { permission: 'admin_users.read' },
      summary: 'List administrators ({items, next_cursor, limit}; query limit, cursor)',
      handler: async (req) => users.list(parseQuery(listQuery, req.query)),
    }),
    route({
      method: 'post',
      path: '/admin/admin-users',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Create a sub_admin; initial permission_codes need admin_permissions.write and a challenge',
      success: { status: 201, description: 'The new administrator' },
      body: createBody,
      handler: async (_req, res, { operation, challengeToken, body }) => {
        res.status(201);
        return users.create(body, { ...operation, challengeToken });
      },
    }),
    route({
      method: 'get',
      path: '/admin/admin-users/:admin_user_id',
      access: { permission: 'admin_users.read' },
      summary: 'One administrator with grants and effective permissions',
      handler: async (req) => users.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/admin/admin-users/:admin_user_id',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Update the profile; role_code/status only by a super_admin with a challenge, never on oneself',
      body: updateBody,
      handler: async (req, _res, { operation, challengeToken, body }) => users.update(id(req.params), body, { ...operation, challengeToken }),
    }),
    route({
      method: 'del',
      path: '/admin/admin-users/:admin_user_id',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Delete an administrator (a super_admin target only by a super_admin)',
      handler: async (req, _res, { operation, challengeToken }) => {
        await users.delete(id(req.params), { ...operation, challengeToken });
        return { status: 'deleted' };
      },
    }),
    route({
      method: 'post',
      path: '/admin/admin-users/:admin_user_id/break-glass-delete',
      access: { permission: 'admin_users.write', challenge: true },
      summary: 'Delete a protected super admin, with a reason',
      body: breakGlassBody,
      handler: async (req, _res, { operation, challengeToken, body }) => {
        await users.breakGlassDelete(id(req.params), body.reason, { ...operation, challengeToken });
        return { status: 'deleted' };
      },
    }),
    route({
      method: 'post',
      path: '/admin/admin-users/:admin_user_id/permissions',
      access: { permission: 'admin_permissions.write', challenge: true },
      summary: 'Grant permissions to a sub_admin (never to oneself)',
      body: grantBody,
      handler: async (req, _res, { operation, challengeToken, body }) =>
        users.grant(id(req.params), body.permission_codes, { ...operation, challengeToken }),
    }),
    route({
      method: 'del',
      path: '/admin/admin-users/:admin_user_id/permissions/:grant_id',
      access: { permission: 'admin_permissions.write', challenge: true },
      summary: 'Revoke one grant',
      handler: async (req, _res, { operation, challengeToken }) =>
        users.revokeGrant(id(req.params), String(req.params.grant_id), { ...operation, challengeToken }),
    }),
    route({
      method: 'post',
      path: '/admin/admin-users/:admin_user_id/password-reset',
      access: { permission: 'admin_users.write', challenge: true },
      summary: "Set a new password and revoke the target's sessions",
      body: resetBody,
      handler: async (req, _res, { operation, challengeToken, body }) => {
        await users.resetPassword(id(req.params), body.new_password, { ...operation, challengeToken });
        return { status: 'password_reset' };
      },
    }),
  ];
};
