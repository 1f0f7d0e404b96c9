import type { IncomingHttpHeaders } from 'node:http';
import type { Domains } from '@agent-host/core';
import { ForbiddenError, UnauthorizedError } from '@agent-host/sdk';
import { ACCESS_COOKIE, readCookie } from './cookies.js';
import { originOf, type AccessGuard } from './route-access.js';

/** `Authorization: Bearer <token>`: an administrator API token. */
function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

/**
 * The administrator guard: an API token in `Authorization: Bearer`, or else the access cookie, must be valid (the
 * cookie's server-side session live), and the administrator must hold the route's permission (a token: also within
 * the token's permissions). Refusals are 401 or 403 and are audited as denials.
 */
export function adminGuard(domains: Pick<Domains, 'adminAuth' | 'apiTokens'>): AccessGuard {
  return {
    async authorize(req, access) {
      const bearer = bearerToken(req.headers);
      const token = bearer ?? readCookie(req.headers, ACCESS_COOKIE);
      const principal = bearer ? await domains.apiTokens.authenticate(bearer) : token ? await domains.adminAuth.authenticate(token) : undefined;
      // Public routes serve anyone; an administrator session, when present, still identifies the caller.
      if ('public' in access) return principal;
      const origin = originOf(req);
      const where = { method: req.method, path: req.path() };
      if (!principal) {
        const reason = bearer ? 'api_token_invalid' : token ? 'session_invalid' : 'login_required';
        await domains.adminAuth.audit({ action: 'access.denied', outcome: 'denied', payload: { ...where, reason } }, origin);
        if (bearer) throw new UnauthorizedError('the API token is unknown, expired or revoked', { code: 'API_TOKEN_INVALID' });
        throw token
          ? new UnauthorizedError('administrator session expired or revoked; log in again', { code: 'SESSION_EXPIRED' })
          : new UnauthorizedError('administrator login required', { code: 'LOGIN_REQUIRED' });
      }
      const missing = 'permission' in access ? [access.permission, ...(access.alsoRequires ?? [])].find((p) => !principal.permissions.includes(p)) : undefined;
      if (missing) {
        await domains.adminAuth.audit(
          {
            action: 'access.denied',
            outcome: 'denied',
            actor_id: principal.admin_user_id,
            payload: { ...where, reason: 'missing_permission', permission: missing },
          },
          origin,
        );
        throw new ForbiddenError(`missing permission ${missing}`, { code: 'PERMISSION_MISSING' });
      }
      return principal;
    },
  };
}
