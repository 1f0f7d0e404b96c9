import { releaseMetadata } from '@agent-host/core';
import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const orNull = z.string().nullable();
const release = z.union([
  z.object({ app_env: z.literal('production'), release_identifier: orNull, tag_name: orNull, tag_message: orNull }).describe('In production: the release tag'),
  z
    .object({ app_env: z.string(), release_identifier: orNull, published_at: orNull, commit_sha: orNull, commit_subject: orNull })
    .describe('Elsewhere: the commit'),
]);

export const releaseMetadataRoutes: RouteFactory = (_domains, app) => [
  route({
    method: 'get',
    path: '/release-metadata',
    access: { permission: 'dashboard.read' },
    summary: 'Release facts selected by APP_ENV',
    success: { status: 200, description: 'The release facts', schema: release },
    handler: async () => releaseMetadata(app.config),
  }),
];
