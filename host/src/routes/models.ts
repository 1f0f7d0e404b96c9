import { checkModels, listModels } from '@agent-host/core';
import { extensionPoints, ForbiddenError, UnauthorizedError } from '@agent-host/sdk';
import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const catalogModel = z.object({
  model_name: z.string(),
  model_provider: z.string(),
  display_name: z.string(),
  description: z.string(),
  category: z.string(),
  is_default: z.boolean(),
  available: z.boolean().describe('False when no enabled plugin provides this model_provider, or the provider cannot call it as configured'),
  unavailable_reason: z.string().nullable().describe('Why not, when available is false (for example a missing API key)'),
  offline: z.boolean().describe('True for deterministic providers that call no language model'),
  check: z
    .object({ ok: z.boolean(), ms: z.number(), error: z.string().nullable() })
    .nullable()
    .optional()
    .describe('With ?check=true: what one call to the model gave (null for an unavailable model)'),
});
const modelCatalog = z.object({ default_model: z.object({ model_provider: z.string(), model_name: z.string() }), models: z.array(catalogModel) });

export const modelRoutes: RouteFactory = (_domains, app) => [
  route({
    method: 'get',
    path: '/models',
    access: { public: true },
    summary: 'The model catalog with defaults; ?check=true (dashboard.read) also calls each available model once',
    success: { status: 200, description: 'The catalog', schema: modelCatalog },
    refusals: { 401: '?check=true without an administrator login (LOGIN_REQUIRED)', 403: '?check=true without dashboard.read (PERMISSION_MISSING)' },
    handler: async (req, _res, { principal }) => {
      const providers = app.kernel.registry(extensionPoints.modelProviders);
      if ((req.query as Record<string, unknown>)?.check !== 'true') return listModels(app.config, providers);
      // The catalog is public; calling every model spends the operator's quota, so that needs an administrator.
      if (!principal) throw new UnauthorizedError('administrator login required for ?check=true', { code: 'LOGIN_REQUIRED' });
      if (!principal.permissions.includes('dashboard.read')) throw new ForbiddenError('missing permission dashboard.read', { code: 'PERMISSION_MISSING' });
      return checkModels(app.config, providers);
    },
  }),
];
