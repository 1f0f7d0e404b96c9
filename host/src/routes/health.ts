import type { RouteFactory } from './route.js';

export const healthRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/healthz',
    access: { public: true },
    summary: 'Liveness, instance and guard state',
    handler: () => app.healthReport(),
  },
];
