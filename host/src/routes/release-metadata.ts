import { releaseMetadata } from '@agent-host/core';
import type { RouteFactory } from './route.js';

export const releaseMetadataRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/release-metadata',
    access: { permission: 'dashboard.read' },
    summary: 'Release facts selected by APP_ENV',
    handler: async () => releaseMetadata(app.config),
  },
];
