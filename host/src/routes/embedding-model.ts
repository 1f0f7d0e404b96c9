import { route, type RouteFactory } from './route.js';

/** `POST /embedding-model/check-readiness` (spec 4.1). */
export const embeddingModelRoutes: RouteFactory = (app) => [
  route({
    method: 'post',
    path: '/embedding-model/check-readiness',
    access: { permission: 'knowledge.write' },
    summary: 'Warm up the configured embedder: backend_type, provider, model, dim and error info',
    handler: async () => app.knowledge!.checkEmbeddingReadiness(),
  }),
];
