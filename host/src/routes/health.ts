import type { RouteFactory } from './route.js';

export const healthRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/healthz',
    access: { public: true },
    summary: 'Liveness, instance and guard state',
    handler: () => app.healthReport(),
  },
  {
    method: 'get',
    path: '/readyz',
    access: { public: true },
    summary: 'Readiness: 200 while the database, job store and vector store answer, else 503 naming the failing ones',
    handler: async (_req, res) => {
      const report = await app.readinessReport();
      if (!report.ready) res.status(503);
      return { status: report.ready ? 'ready' : 'not_ready', failing: report.failing };
    },
  },
];
