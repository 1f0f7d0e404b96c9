import { embeddingReadiness } from '../schemas/knowledge.js';
import { route, type RouteFactory } from './route.js';

/** `POST /embedding-model/check-readiness` (spec 4.1). */
export const embeddingModelRoutes: RouteFactory<'knowledge'> = (domains) => [
  route({
    method: 'post',
    path: '/embedding-model/check-readiness',
    access: { permission: 'knowledge.write' },
    summary: 'Warm up the configured embedder: backend_type, provider, model, dim and error info',
    success: { status: 200, description: 'What the embedder answered; ready is false with the error when it failed', schema: embeddingReadiness },
    handler: async () => domains.knowledge.checkEmbeddingReadiness(),
  }),
];
