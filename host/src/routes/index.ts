import { adminApiTokenRoutes } from './admin-api-tokens.js';
import { adminAuthRoutes } from './admin-auth.js';
import { adminChallengeRoutes } from './admin-challenges.js';
import { adminUserRoutes } from './admin-users.js';
import { agentRoutes } from './agents.js';
import { auditLogRoutes } from './audit-logs.js';
import { chatOrchestratorRoutes } from './chat-orchestrators.js';
import { correctionRoutes } from './corrections.js';
import { documentRoutes } from './documents.js';
import { embeddingModelRoutes } from './embedding-model.js';
import { healthRoutes } from './health.js';
import { ingestionJobRoutes } from './ingestion-jobs.js';
import { inspectRunRoutes } from './inspect-runs.js';
import { knowledgeSourceRoutes } from './knowledge-sources.js';
import { mcpCallRoutes } from './mcp-calls.js';
import { mcpCredentialRoutes } from './mcp-credentials.js';
import { mcpMountRoutes } from './mcp-mounts.js';
import { mcpServerRoutes } from './mcp-servers.js';
import { modelRoutes } from './models.js';
import { mountRoutes } from './mounts.js';
import { pluginRoutes } from './plugins.js';
import { publicSessionRoutes } from './public-sessions.js';
import { objectStoreRoutes } from './object-store.js';
import { ragDebugRoutes } from './rag-debug.js';
import { releaseMetadataRoutes } from './release-metadata.js';
import { scheduledTaskRoutes } from './scheduled-tasks.js';
import { evaluationDatasetRoutes } from './evaluation-datasets.js';
import { evaluationRunRoutes } from './evaluation-runs.js';
import { etlJobRoutes } from './etl-jobs.js';
import { documentRecognitionRoutes } from './document-recognition.js';
import { fusionRunRoutes } from './fusion-runs.js';
import { publicApiKeyRoutes } from './public-api-keys.js';
import { sessionRoutes } from './sessions.js';
import { skillCallRoutes } from './skill-calls.js';
import { skillMountRoutes } from './skill-mounts.js';
import { skillRoutes } from './skills.js';
import { streamRoutes } from './stream.js';
import { systemSettingRoutes } from './system-settings.js';
import { takeoverRoutes } from './takeover.js';
import { toolApprovalRoutes } from './tool-approvals.js';
import type { Domains } from '@agent-host/core';
import type { RouteFactory } from './route.js';

/** Every route file, mounted in this order. */
export const routeFactories: RouteFactory<keyof Domains>[] = [
  healthRoutes,
  modelRoutes,
  chatOrchestratorRoutes,
  releaseMetadataRoutes,
  pluginRoutes,
  adminAuthRoutes,
  adminChallengeRoutes,
  adminApiTokenRoutes,
  adminUserRoutes,
  systemSettingRoutes,
  agentRoutes,
  streamRoutes,
  publicSessionRoutes,
  sessionRoutes,
  takeoverRoutes,
  scheduledTaskRoutes,
  evaluationDatasetRoutes,
  evaluationRunRoutes,
  fusionRunRoutes,
  publicApiKeyRoutes,
  etlJobRoutes,
  documentRecognitionRoutes,
  auditLogRoutes,
  objectStoreRoutes,
  knowledgeSourceRoutes,
  mountRoutes,
  documentRoutes,
  ingestionJobRoutes,
  inspectRunRoutes,
  embeddingModelRoutes,
  ragDebugRoutes,
  correctionRoutes,
  mcpServerRoutes,
  mcpCredentialRoutes,
  mcpMountRoutes,
  mcpCallRoutes,
  toolApprovalRoutes,
  skillRoutes,
  skillMountRoutes,
  skillCallRoutes,
];
