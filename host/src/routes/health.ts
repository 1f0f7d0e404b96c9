import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const healthReport = z.object({
  status: z.literal('ok'),
  app_env: z.string(),
  app_instance: z.string(),
  database_fingerprint: z.string(),
  guard_mode: z.enum(['enforce', 'warn']),
  guard_state: z.enum(['ok', 'warning', 'failed']),
  guard_messages: z.array(z.string()),
});
const failingCheck = z.object({ name: z.string(), state: z.string(), message: z.string() });
const readiness = z.object({ status: z.enum(['ready', 'not_ready']), failing: z.array(failingCheck) });

export const healthRoutes: RouteFactory = (_domains, app) => [
  route({
    method: 'get',
    path: '/healthz',
    access: { public: true },
    summary: 'Liveness, instance and guard state',
    success: { status: 200, description: 'The process answers; guard_state is the worst of the guards', schema: healthReport },
    handler: () => app.healthReport(),
  }),
  route({
    method: 'get',
    path: '/readyz',
    access: { public: true },
    summary: 'Readiness: 200 while the database, job store and vector store answer, else 503 naming the failing ones',
    success: { status: 200, description: 'Ready to serve', schema: readiness },
    refusals: { 503: { when: 'Not ready: `failing` names the checks that fail', schema: readiness } },
    handler: async (_req, res) => {
      const report = await app.readinessReport();
      if (!report.ready) res.status(503);
      return { status: report.ready ? 'ready' : 'not_ready', failing: report.failing };
    },
  }),
];
