import { adminAuthRoutes } from './admin-auth.js';
import { adminChallengeRoutes } from './admin-challenges.js';
import { adminUserRoutes } from './admin-users.js';
import { agentRoutes } from './agents.js';
import { auditLogRoutes } from './audit-logs.js';
import { chatOrchestratorRoutes } from './chat-orchestrators.js';
import { healthRoutes } from './health.js';
import { modelRoutes } from './models.js';
import { releaseMetadataRoutes } from './release-metadata.js';
import { sessionRoutes } from './sessions.js';
import { streamRoutes } from './stream.js';
import { systemSettingRoutes } from './system-settings.js';
import type { RouteFactory } from './route.js';

/** Every route file, mounted in this order. */
export const routeFactories: RouteFactory[] = [
  healthRoutes,
  modelRoutes,
  chatOrchestratorRoutes,
  releaseMetadataRoutes,
  adminAuthRoutes,
  adminChallengeRoutes,
  adminUserRoutes,
  systemSettingRoutes,
  agentRoutes,
  streamRoutes,
  sessionRoutes,
  auditLogRoutes,
];
