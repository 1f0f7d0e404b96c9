import type { AdminPrincipal, Operation, RequestOrigin } from '@agent-host/core';
import type { Request } from 'restify';
import { clientAddressOf } from './client-address.js';

/**
 * Who may call a route: anyone (spec 5.6's public list), any logged-in
 * administrator, or holders of a permission (and of every `alsoRequires`
 * permission). `challenge: true` marks a
 * sensitive operation (spec 5.4): its handler receives the
 * `x-admin-challenge-token` header and spends it with the change.
 */
export type RouteAccess = { public: true } | { login: true; challenge?: true } | { permission: string; alsoRequires?: readonly string[]; challenge?: true };

export const CHALLENGE_HEADER = 'x-admin-challenge-token';

/** What a handler knows about the caller. */
export interface RequestContext {
  principal: AdminPrincipal | undefined;
  origin: RequestOrigin;
  /** The challenge token, on routes that declare `challenge: true`. */
  challengeToken: string | undefined;
  /** The administrator and origin every audited change takes; read it only on routes that need a login. */
  readonly operation: Operation;
}

/** Decides whether a request may use a route; resolves with the administrator, if any. */
export interface AccessGuard {
  authorize(req: Request, access: RouteAccess): Promise<AdminPrincipal | undefined>;
}

export function originOf(req: Request): RequestOrigin {
  const agent = req.headers['user-agent'];
  return { clientIp: clientAddressOf(req), userAgent: typeof agent === 'string' ? agent : null };
}
