import { checkModels, listModels } from '@agent-host/core';
import { extensionPoints, ForbiddenError, UnauthorizedError } from '@agent-host/sdk';
import type { RouteFactory } from './route.js';

export const modelRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/models',
    access: { public: true },
    summary: 'The model catalog with defaults; ?check=true (dashboard.read) also calls each available model once',
    handler: async (req, _res, { principal }) => {
      const providers = app.kernel.registry(extensionPoints.modelProviders);
      if ((req.query as Record<string, unknown>)?.check !== 'true') return listModels(app.config, providers);
      // The catalog is public; calling every model spends the operator's quota, so that needs an administrator.
      if (!principal) throw new UnauthorizedError('administrator login required for ?check=true', { code: 'LOGIN_REQUIRED' });
      if (!principal.permissions.includes('dashboard.read')) throw new ForbiddenError('missing permission dashboard.read', { code: 'PERMISSION_MISSING' });
      return checkModels(app.config, providers);
    },
  },
];
