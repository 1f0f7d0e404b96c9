import { extensionPoints, type Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { AdminAuth } from './admin/admin-auth.js';
import { AdminUsers } from './admin/admin-users.js';
import { AuditLog } from './admin/audit-log-store.js';
import { ApiTokens } from './admin/api-tokens.js';
import { Challenges } from './admin/challenges.js';
import { SystemSettings } from './admin/system-settings.js';
import { Agents } from './agents/agents.js';
import { ChatService } from './chat/chat-service.js';
import { ConversationStore } from './chat/conversation-store.js';
import { agentCostOverview, agentUsageByDay } from './chat/cost-overview.js';
import { RequestLimits } from './chat/request-limits.js';
import type { SessionEvents } from './chat/session-events.js';
import { SessionQueries } from './chat/session-read-store.js';
import { SessionTurns } from './chat/session-turns.js';
import { TrafficLimits } from './chat/traffic-limits.js';
import type { HostConfig } from './config/schema.js';
import type { Kernel } from './kernel/kernel.js';
import { Knowledge } from './knowledge/knowledge.js';
import { Mcp } from './mcp/mcp.js';
import type { TurnTraceExporter } from './observability/turn-trace-exporter.js';
import type { StreamingObjectStore } from './services/object-store-selection.js';
import type { Keyring } from './services/secrets.js';
import { skillMcpServers } from './skills/mcp-servers.js';
import { Skills } from './skills/skills.js';
import { Takeover } from './takeover/takeover.js';
import { ScheduledTasks } from './scheduled-tasks/scheduled-tasks.js';
import { EvaluationDatasets } from './evaluation/datasets.js';
import { EvaluationRuns } from './evaluation/evaluation-runs.js';
import { pricingFromConfig } from './usage/cost.js';
import { PublicApiKeys } from './fusion/api-keys.js';
import { FusionRuns } from './fusion/fusion-runs.js';
import { EtlJobs } from './etl/etl-jobs.js';
import { DocumentRecognition } from './document-recognition/document-recognition.js';
import { RuntimeAgents } from './document-recognition/runtime-agents.js';

/**
 * Every domain of a started host, none optional: the HTTP routes and the WebSocket gateway each take the ones they
 * use (`Pick<Domains, ...>`), so what a route file can reach is in its type.
 */
export interface Domains {
  adminAuth: AdminAuth;
  challenges: Challenges;
  /** Administrator API tokens, for machines calling the control plane. */
  apiTokens: ApiTokens;
  adminUsers: AdminUsers;
  auditLog: AuditLog;
  systemSettings: SystemSettings;
  agents: Agents;
  knowledge: Knowledge;
  mcp: Mcp;
  skills: Skills;
  chat: ChatService;
  /** Rate limits on chat turns and socket handshakes, checked by the transports before a stream opens. */
  trafficLimits: TrafficLimits;
  sessions: SessionQueries;
  /** One turn at a time per session, and an administrator's cancel of the running one. */
  sessionTurns: SessionTurns;
  takeover: Takeover;
  /** What happens in sessions, for the WebSocket gateway. */
  sessionEvents: SessionEvents;
  /** Scheduled tasks and their runs (spec 4.6). */
  scheduledTasks: ScheduledTasks;
  /** Evaluation datasets and their frozen snapshots (spec 4.9). */
  evaluationDatasets: EvaluationDatasets;
  /** Evaluation runs, their worker and results (spec 3.4, 4.9). */
  evaluationRuns: EvaluationRuns;
  /** Public API keys of Fusion agents (spec 5.7). */
  publicApiKeys: PublicApiKeys;
  /** Fusion runs, their worker, and the public Fusion routes' access rules (spec 4.11). */
  fusionRuns: FusionRuns;
  /** ETL jobs of etl agents, their worker and their public alias (spec 4.10). */
  etlJobs: EtlJobs;
  /** Document-recognition runtime agents: registered Fusion agents (spec 4.10). */
  runtimeAgents: RuntimeAgents;
  /** Document-recognition runs, their worker, field reviews and ledger (spec 4.10). */
  documentRecognition: DocumentRecognition;
  /** `GET /agents/{agent_id}/cost-overview`. */
  costOverview: (agentId: string) => ReturnType<typeof agentCostOverview>;
  /** `GET /agents/{agent_id}/usage-by-day`. */
  usageByDay: (agentId: string, days: number) => ReturnType<typeof agentUsageByDay>;
}

/** What the domains are built on: the open database, configuration, the plugins' registries and host services. */
export interface DomainDeps {
  db: Sequelize;
  config: HostConfig;
  kernel: Kernel;
  instanceId: string;
  /** The key administrator access tokens are signed with. */
  accessTokenKey: Uint8Array;
  secrets: Keyring;
  objectStore: StreamingObjectStore;
  sessionEvents: SessionEvents;
  /** The OTLP exporter of turn traces, when one is configured. */
  traces: TurnTraceExporter | undefined;
  logger: Logger;
}

/** Builds every domain, in dependency order; nothing here touches the network or starts work. */
export function createDomains(deps: DomainDeps): Domains {
  const { db, config, kernel, sessionEvents, logger } = deps;
  const adminAuth = new AdminAuth(db, config.admin, deps.accessTokenKey);
  const challenges = new Challenges(db, adminAuth, config.admin);
  const systemSettings = new SystemSettings(db, config, adminAuth, challenges);
  const agents = new Agents(
    db,
    config,
    systemSettings,
    kernel.registry(extensionPoints.orchestrators),
    kernel.registry(extensionPoints.fusionRuntimes),
    adminAuth,
  );
  const knowledge = new Knowledge({
    db,
    config: config.knowledge,
    instanceId: deps.instanceId,
    parsers: kernel.registry(extensionPoints.documentParsers),
    embedders: kernel.registry(extensionPoints.embedders),
    retrievers: kernel.registry(extensionPoints.retrievers),
    objectStore: deps.objectStore,
    logger: logger.child({ component: 'knowledge' }),
  });
  const mcp = new Mcp({
    db,
    config: config.mcp,
    secrets: deps.secrets,
    backends: kernel.registry(extensionPoints.toolBackends),
    providers: kernel.registry(extensionPoints.toolProviders),
    events: sessionEvents,
  });
  const skills = new Skills({
    db,
    backends: kernel.registry(extensionPoints.skillBackends),
    servers: skillMcpServers(mcp.servers),
  });
  const sessionTurns = new SessionTurns(db, deps.instanceId);
  const scheduledTasks = new ScheduledTasks(db, config, agents, deps.instanceId, logger.child({ component: 'scheduled-tasks' }));
  const pricing = pricingFromConfig(config);
  const publicApiKeys = new PublicApiKeys(db, agents, config.fusion.api_key_requests_per_minute);
  const recognizers = kernel.registry(extensionPoints.documentRecognizers);
  const runtimeAgents = new RuntimeAgents({ db, config, agents, recognizers });
  const extraction = {
    config,
    recognizers,
    parsers: kernel.registry(extensionPoints.documentParsers),
    runtimes: kernel.registry(extensionPoints.fusionRuntimes),
    providers: kernel.registry(extensionPoints.modelProviders),
    objectStore: deps.objectStore,
    pricing,
  };
  const documentRecognition = new DocumentRecognition({
    db,
    agents,
    runtimeAgents,
    ...extraction,
    instanceId: deps.instanceId,
    logger: logger.child({ component: 'document-recognition' }),
  });
  const evaluationDatasets = new EvaluationDatasets(db, config.evaluation, deps.objectStore, documentRecognition, logger.child({ component: 'evaluation' }));
  const trafficLimits = new TrafficLimits(db, config.rate_limits);
  const chat = new ChatService({
    config,
    agents,
    trafficLimits,
    conversations: new ConversationStore(db),
    limits: new RequestLimits(db, deps.instanceId, config.agent.per_caller_daily_requests),
    turns: sessionTurns,
    orchestrators: kernel.registry(extensionPoints.orchestrators),
    providers: kernel.registry(extensionPoints.modelProviders),
    pricing,
    events: sessionEvents,
    knowledge,
    skills,
    mcp,
    scheduledTasks,
    traces: deps.traces,
    logger: logger.child({ component: 'chat' }),
  });
  return {
    adminAuth,
    challenges,
    apiTokens: new ApiTokens(db, adminAuth, challenges),
    adminUsers: new AdminUsers(adminAuth, challenges, config.admin.sub_admins_manage_permissions),
    auditLog: new AuditLog(db),
    systemSettings,
    agents,
    knowledge,
    mcp,
    skills,
    chat,
    trafficLimits,
    sessions: new SessionQueries(db),
    sessionTurns,
    takeover: new Takeover(db, sessionEvents, config.agent.message_max_length),
    sessionEvents,
    scheduledTasks,
    evaluationDatasets,
    evaluationRuns: new EvaluationRuns(db, config, agents, evaluationDatasets, deps.instanceId, extraction, logger.child({ component: 'evaluation' })),
    publicApiKeys,
    fusionRuns: new FusionRuns({
      db,
      config,
      agents,
      keys: publicApiKeys,
      runtimes: kernel.registry(extensionPoints.fusionRuntimes),
      providers: kernel.registry(extensionPoints.modelProviders),
      parsers: kernel.registry(extensionPoints.documentParsers),
      objectStore: deps.objectStore,
      pricing,
      instanceId: deps.instanceId,
      logger: logger.child({ component: 'fusion' }),
    }),
    etlJobs: new EtlJobs({
      db,
      config,
      agents,
      runtimes: kernel.registry(extensionPoints.etlRuntimes),
      providers: kernel.registry(extensionPoints.modelProviders),
      objectStore: deps.objectStore,
      instanceId: deps.instanceId,
      logger: logger.child({ component: 'etl' }),
    }),
    runtimeAgents,
    documentRecognition,
    costOverview: (agentId) => agentCostOverview(db, agentId),
    usageByDay: (agentId, days) => agentUsageByDay(db, agentId, days),
  };
}
