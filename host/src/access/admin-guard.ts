import type { AgentHostApp } from '@agent-host/core';
import { ForbiddenError, UnauthorizedError } from '@agent-host/sdk';
import { ACCESS_COOKIE, readCookie } from './cookies.js';
import { originOf, type AccessGuard } from './route-access.js';

/**
 * The administrator guard: the access cookie must carry a valid token whose
 * server-side session is live, and the administrator must hold the route's
 * permission. Refusals are 401 or 403 and are audited as denials.
 */
export function adminGuard(app: AgentHostApp): AccessGuard {
  const auth = app.adminAuth!;
  return {
    async authorize(req, access) {
      const token = readCookie(req.headers, ACCESS_COOKIE);
      const principal = token ? await auth.authenticate(token) : undefined;
      // Public routes serve anyone; an administrator session, when present, still identifies the caller.
      if ('public' in access) return principal;
      const origin = originOf(req);
      const where = { method: req.method, path: req.path() };
      if (!principal) {
        const reason = token ? 'session_invalid' : 'login_required';
        await auth.audit({ action: 'access.denied', outcome: 'denied', payload: { ...where, reason } }, origin);
        throw token
          ? new UnauthorizedError('administrator session expired or revoked; log in again', { code: 'SESSION_EXPIRED' })
          : new UnauthorizedError('administrator login required', { code: 'LOGIN_REQUIRED' });
      }
      const missing = 'permission' in access ? [access.permission, ...(access.alsoRequires ?? [])].find((p) => !principal.permissions.includes(p)) : undefined;
      if (missing) {
        await auth.audit(
          { action: 'access.denied', outcome: 'denied', actor_id: principal.admin_user_id, payload: { ...where, reason: 'missing_permission', permission: missing } },
          origin,
        );
        throw new ForbiddenError(`missing permission ${missing}`, { code: 'PERMISSION_MISSING' });
      }
      return principal;
    },
  };
}
