export { AgentHostApp, pluginSpecifiers, StartupError, type AppOptions } from './app.js';
export type { Domains } from './domains.js';
export { ConfigError, loadConfig, productionGuardProblems } from './config/load.js';
export { describeConfig, type ConfigEntry } from './config/describe.js';
export { ENV_BINDINGS } from './config/env.js';
export { configSchema, type HostConfig } from './config/schema.js';
export { cacheDir } from './infra/cache-dir.js';
export { ensureChromaVenv } from './infra/chroma/chroma-venv.js';
export type { EmbeddedServer } from './infra/embedded-server.js';
export { EmbeddedFerretDb } from './infra/ferretdb/embedded-ferretdb.js';
export { ensureFerretDb } from './infra/ferretdb/ferretdb-build.js';
export { ensurePipTool, type PipTool } from './infra/process/pip-venv.js';
export { chromaHeartbeat, EmbeddedChroma } from './infra/chroma/embedded-chroma.js';
export { databaseFingerprint } from './db/database.js';
export { databaseUnreachable } from './errors/database-unreachable.js';
export { publicError, type PublicError } from './errors/public-error.js';
export { EmbeddedPostgresServer } from './infra/postgres/embedded-postgres.js';
export type { HealthReport } from './health/health-report.js';
export { Kernel, type PluginInfo } from './kernel/kernel.js';
export { checkModels, listModels } from './models/model-catalog.js';
export { listOrchestrators } from './orchestrators/orchestrator-catalog.js';
export { DEFAULT_CONFIG_DIR, PROJECT_ROOT } from './paths.js';
export { releaseMetadata } from './release/release-metadata.js';
export { createRootLogger } from './services/logger.js';
export { currentRequestId, inRequestScope } from './observability/request-scope.js';
export { AdminAuth, type AdminPrincipal, type IssuedTokens, type RequestOrigin } from './admin/admin-auth.js';
export { PERMISSION_CATALOG, isPermissionCode, type PermissionCode, type RoleCode } from './admin/permissions.js';
export { Challenges } from './admin/challenges.js';
export { API_TOKEN_PREFIX, ApiTokens, type ApiTokenInput, type ApiTokenView } from './admin/api-tokens.js';
export { SystemSettings } from './admin/system-settings.js';
export { AdminUsers } from './admin/admin-users.js';
export { AuditLog, decodeAuditCursor, type AuditLogItem, type AuditLogPage, type AuditLogQuery } from './admin/audit-log-store.js';
export { createSuperAdmin, type CreatedSuperAdmin } from './admin/create-super-admin.js';
export { agentCreateSchema, agentUpdateSchema, agentViewSchema, type AgentCreateInput, type AgentUpdateInput } from './agents/agent-schema.js';
export { Agents, judgePromptVersion, type AgentTypeChangeCheck } from './agents/agents.js';
export {
  rollupUsage,
  summarizeTurnUsage,
  type ModelCall,
  type TokenCounts,
  type TokenEstimator,
  type TokenUsageRollup,
  type TokenUsageSummary,
} from './usage/token-usage.js';
export { estimateCost, pricingFromConfig, pricingKey, type CostEntry, type EstimatedCostSummary, type ModelPrices, type PricingTable } from './usage/cost.js';
export { groupCallsByScope, readUsageCalls, type StoredModelCall } from './usage/usage-event-store.js';
export { ChatService } from './chat/chat-service.js';
export { chatRequestSchema, issueSessionId, type ChatRequest, type StreamEvent } from './chat/turn/turn-request.js';
export type { RateLimitRefusal, TrafficLimits } from './chat/traffic-limits.js';
export { presentMessage, presentSessionState, type PresentedMessage, type SessionState } from './chat/messages.js';
export type { SessionBroadcast, SessionEvents, TakeoverEventView } from './chat/session-events.js';
export { type Operator, operatorFor } from './takeover/operator.js';
export { Takeover } from './takeover/takeover.js';
export type { Operation } from './admin/operation.js';
export { Knowledge } from './knowledge/knowledge.js';
export { correctionUpdateSchema } from './knowledge/corrections.js';
export { revealsCorrectionPublication } from './knowledge/correction-views.js';
export { CHUNKING_STRATEGIES } from './knowledge/chunking.js';
export { baseContentType, type SpooledFile, type UploadedFile } from './knowledge/documents.js';
export { ingestSchema, rebuildSchema } from './knowledge/ingestion-jobs.js';
export {
  CONFLICT_POLICIES,
  createTaskSchema,
  EXECUTION_STATES,
  TARGET_MODES,
  TASK_STATUSES,
  taskFiltersSchema,
  type ScheduledTasks,
} from './scheduled-tasks/scheduled-tasks.js';
export { SCHEDULE_KINDS } from './scheduled-tasks/schedule.js';
export { inspectSchema } from './knowledge/inspect-runs.js';
export { mountCreateSchema } from './knowledge/mounts.js';
export { ragDebugSchema } from './knowledge/rag-debug.js';
export { sourceCreateSchema, sourceUpdateSchema, sourceViewSchema } from './knowledge/sources.js';
export { Mcp } from './mcp/mcp.js';
export {
  credentialCreateSchema,
  credentialRotateSchema,
  credentialUpdateSchema,
  mountCreateSchema as mcpMountCreateSchema,
  mountUpdateSchema as mcpMountUpdateSchema,
  responsePreviewSchema,
  serverCreateSchema,
  serverUpdateSchema,
  serverViewSchema,
  testCallSchema,
} from './mcp/admin/schemas.js';
export { Skills } from './skills/skills.js';
export { SKILL_STATUSES, skillCreateSchema, skillUpdateSchema } from './skills/skill-assets.js';
export { versionCreateSchema, versionUpdateSchema } from './skills/skill-versions.js';
export { skillMountCreateSchema, skillMountUpdateSchema } from './skills/skill-mounts.js';
export { SKILL_CALL_STATUSES } from './skills/skill-call-audit-store.js';
export { ToolCallBudget } from './chat/tool-budget.js';
export { ENCRYPTED_COLUMNS, reencryptAll } from './services/encrypted-columns.js';
export type { RunSubmission } from './fusion/run-inputs.js';
export type { EtlFile, EtlSubmission } from './etl/etl-jobs.js';
export type { RecognitionCaller, RecognitionFile } from './document-recognition/document-recognition.js';
