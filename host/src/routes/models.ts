import { listModels } from '@agent-host/core';
import { extensionPoints } from '@agent-host/sdk';
import type { RouteFactory } from './route.js';

export const modelRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/models',
    access: { public: true },
    summary: 'The model catalog with defaults',
    handler: async () => listModels(app.config, app.kernel.registry(extensionPoints.modelProviders)),
  },
];
