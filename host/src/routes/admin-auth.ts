import { PERMISSION_CATALOG, type AdminPrincipal } from '@agent-host/core';
import { UnauthorizedError } from '@agent-host/sdk';
import { z } from 'zod';
import { clearSessionCookies, readCookie, REFRESH_COOKIE, setSessionCookies } from '../access/cookies.js';
import { listOf, statusOf } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const loginBody = z.object({ username: z.string().trim().min(1).max(120), password: z.string().min(1).max(1024) }).strict();

const snapshotSchema = z
  .object({
    admin_user_id: z.string().uuid(),
    username: z.string(),
    display_name: z.string(),
    role_code: z.string(),
    session_id: z.string().describe('The login session (an API token has its own id here)'),
    permissions: z.array(z.string()).describe('The effective permissions'),
  })
  .meta({ id: 'AdminSession' });
const permissionCatalog = listOf(z.object({ code: z.string(), description: z.string() }));

/** The session snapshot: who is logged in and what they may do. Never a token. */
const snapshot = (p: AdminPrincipal) => ({
  admin_user_id: p.admin_user_id,
  username: p.username,
  display_name: p.display_name,
  role_code: p.role_code,
  session_id: p.session_id,
  permissions: p.permissions,
});

export const adminAuthRoutes: RouteFactory<'adminAuth'> = (domains, app) => {
  const secure = app.config.admin.access_cookie_secure;
  return [
    route({
      method: 'post',
      path: '/admin/auth/login',
      access: { public: true },
      summary: 'Log in with username and password; sets the HttpOnly access and refresh cookies',
      body: loginBody,
      example: { username: 'ops-admin', password: 'correct horse battery staple' },
      success: { status: 200, description: 'Logged in: the session snapshot; the cookies carry the tokens', schema: snapshotSchema },
      refusals: {
        401: 'Wrong username or password (INVALID_LOGIN)',
        403: 'The account is disabled (ACCOUNT_DISABLED)',
        429: 'Too many failed logins for this username or address; see Retry-After (TOO_MANY_LOGIN_FAILURES)',
      },
      handler: async (_req, res, { origin, body: { username, password } }) => {
        const { principal, tokens } = await domains.adminAuth.login(username, password, origin);
        setSessionCookies(res, tokens, secure);
        return snapshot(principal);
      },
    }),
    route({
      method: 'post',
      path: '/admin/auth/refresh',
      access: { public: true },
      summary: 'Rotate the refresh token (single use) and issue a new access token',
      success: { status: 200, description: 'The session snapshot; the cookies carry the new tokens', schema: snapshotSchema },
      refusals: {
        401: 'No refresh cookie, or it is invalid, expired or already used (REFRESH_TOKEN_INVALID)',
        403: 'The account is disabled (ACCOUNT_DISABLED)',
      },
      handler: async (req, res, { origin }) => {
        const token = readCookie(req.headers, REFRESH_COOKIE);
        if (!token) throw new UnauthorizedError('no refresh cookie; log in again', { code: 'REFRESH_TOKEN_INVALID' });
        const { principal, tokens } = await domains.adminAuth.refresh(token, origin);
        setSessionCookies(res, tokens, secure);
        return snapshot(principal);
      },
    }),
    route({
      method: 'post',
      path: '/admin/auth/logout',
      access: { login: true },
      summary: 'Revoke the current session and clear its cookies',
      success: { status: 200, description: 'Logged out', schema: statusOf('logged_out') },
      handler: async (_req, res, { principal, origin }) => {
        await domains.adminAuth.logout(principal!, origin);
        clearSessionCookies(res, secure);
        return { status: 'logged_out' };
      },
    }),
    route({
      method: 'get',
      path: '/admin/auth/me',
      access: { login: true },
      summary: 'The session snapshot and effective permissions',
      success: { status: 200, description: 'The session snapshot', schema: snapshotSchema },
      handler: async (_req, _res, { principal }) => snapshot(principal!),
    }),
    route({
      method: 'get',
      path: '/admin/permission-catalog',
      access: { login: true },
      summary: 'Every grantable permission',
      success: { status: 200, description: 'The permissions', schema: permissionCatalog },
      handler: async () => ({ items: PERMISSION_CATALOG.map((p) => ({ code: p.code, description: p.description })) }),
    }),
  ];
};
