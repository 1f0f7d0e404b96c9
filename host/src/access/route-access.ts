import { UnauthorizedError } from '@agent-host/sdk';
import type { Request } from 'restify';

/** Who may call a route: anyone (spec 5.6's public list) or holders of a permission. */
export type RouteAccess = { public: true } | { permission: string };

/**
 * Decides whether a request may use a route. The administrator-access layer
 * supplies the real guard; without one, every non-public route answers 401.
 */
export interface AccessGuard {
  authorize(req: Request, access: RouteAccess): Promise<void>;
}

export const noAdministratorLogin: AccessGuard = {
  async authorize(_req, access) {
    if ('public' in access) return;
    throw new UnauthorizedError('administrator login required');
  },
};
