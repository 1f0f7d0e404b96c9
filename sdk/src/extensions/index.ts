import { createExtensionPoint } from '../refs.js';
import type { DocumentParser, DocumentRecognizer } from './documents.js';
import type { Embedder } from './embedders.js';
import type { EtlRuntime } from './etl.js';
import type { FusionRuntime } from './fusion.js';
import type { ModelProvider } from './models.js';
import type { ObjectStoreBackend } from './object-stores.js';
import type { Orchestrator } from './orchestrators.js';
import type { ExtensionRegistry } from './registry.js';
import type { Retriever } from './retrievers.js';
import type { SkillBackend, ToolBackend, ToolProvider } from './tools.js';

export type {
  DocumentInput,
  DocumentParser,
  DocumentRecognizer,
  FieldLocation,
  FieldValue,
  ParsedDocument,
  ParsedElement,
  PreparedDocument,
  PreviewImage,
  RecognitionContext,
  RecognitionPage,
} from './documents.js';
export type { Embedder, EmbedderInfo } from './embedders.js';
export { EVALUATION_JUDGE_SCHEMA, type JudgeInput } from './evaluation.js';
export {
  groundingPolicySchema,
  type Citation,
  type Evidence,
  type GroundedAnswer,
  type GroundedAnswerRequest,
  type GroundingDecision,
  type GroundingPath,
  type GroundingPolicy,
} from './grounding.js';
export type { ScheduledTaskSummary, ScheduleRequest, SchedulingHandle, SchedulingOutcome } from './scheduling.js';
export {
  ETL_COLUMN_TYPES,
  type EtlCellIssue,
  type EtlColumnMapping,
  type EtlColumnType,
  type EtlConvertedRow,
  type EtlPlan,
  type EtlPlanContext,
  type EtlPlanInput,
  type EtlRuntime,
  type EtlTargetColumn,
} from './etl.js';
export {
  FUSION_OUTPUT_SCHEMA_NAME,
  fusionDefinitionSchema,
  fusionInputSlotSchema,
  fusionOutputSchema,
  fusionOutputSlotSchema,
  type FusionDefinition,
  type FusionFileInput,
  type FusionInput,
  type FusionInputSlot,
  type FusionOutputItem,
  type FusionOutputSlot,
  type FusionRunContext,
  type FusionRunRequest,
  type FusionRunResult,
  type FusionRuntime,
} from './fusion.js';
export type {
  ChatCallOptions,
  ChatCompletion,
  ChatMessage,
  ChatModel,
  ChatModelSpec,
  ChatStreamChunk,
  JsonSchema,
  ModelAvailability,
  ModelProvider,
  ProviderUsage,
  ToolCallRequest,
  ToolSpec,
} from './models.js';
export { catalogApiKey, catalogKeyAvailability, withCatalogApiKey, type ModelKeySource } from './model-keys.js';
export { callDeadline, type CallDeadline } from './call-deadline.js';
export type {
  AgentSnapshot,
  EvidenceInput,
  GroundingHandle,
  AgentType,
  MessageType,
  ModelChoice,
  ModelRouter,
  ModelStage,
  Orchestrator,
  RetrievalHandle,
  RetrievedChunk,
  ToolGuidance,
  ToolPipelineResult,
  ToolResultContext,
  Trace,
  TurnContext,
  TurnEvent,
  TurnResult,
  TurnToolHandle,
} from './orchestrators.js';
export {
  assertObjectKey,
  attachmentDisposition,
  OBJECT_STORE_PROXY_PATH,
  objectKeyFilename,
  objectStoreProxyDownload,
  type ObjectStoreBackend,
} from './object-stores.js';
export type { ExtensionRegistry, RegisterOptions } from './registry.js';
export type { Retriever, VectorFilter, VectorHit, VectorMetadata, VectorPoint } from './retrievers.js';
export type {
  SkillBackend,
  SkillInvocation,
  ToolBackend,
  ToolCallOptions,
  ToolCallOutcome,
  ToolDescriptor,
  ToolHandle,
  ToolProvider,
  ToolServerConnection,
} from './tools.js';

/**
 * The keyed registries plugins contribute to.
 * @public
 */
export const extensionPoints = Object.freeze({
  /** Chat runtimes by `orchestrator_key`. */
  orchestrators: createExtensionPoint<ExtensionRegistry<Orchestrator>>({ id: 'core.orchestrators' }),
  /** Tool transports by `transport_type` (`stdio`, `http_sse`). */
  toolBackends: createExtensionPoint<ExtensionRegistry<ToolBackend>>({ id: 'core.toolBackends' }),
  /** Native tools by provider key, each listed as a tool server of transport `tool_provider`. @beta */
  toolProviders: createExtensionPoint<ExtensionRegistry<ToolProvider>>({ id: 'core.toolProviders' }),
  /** Skill backends by backend type (`mcp`, `http`). */
  skillBackends: createExtensionPoint<ExtensionRegistry<SkillBackend>>({ id: 'core.skillBackends' }),
  /** Vector stores by backend name (`chroma`). */
  retrievers: createExtensionPoint<ExtensionRegistry<Retriever>>({ id: 'core.retrievers' }),
  /** Embedders by backend name. */
  embedders: createExtensionPoint<ExtensionRegistry<Embedder>>({ id: 'core.embedders' }),
  /** Model providers by `model_provider`. */
  modelProviders: createExtensionPoint<ExtensionRegistry<ModelProvider>>({ id: 'core.modelProviders' }),
  /** Document parsers by content type. */
  documentParsers: createExtensionPoint<ExtensionRegistry<DocumentParser>>({ id: 'core.documentParsers' }),
  /** Document recognizers by name. @beta */
  documentRecognizers: createExtensionPoint<ExtensionRegistry<DocumentRecognizer>>({ id: 'core.documentRecognizers' }),
  /** ETL runtimes by name (`etl_mapper`). */
  etlRuntimes: createExtensionPoint<ExtensionRegistry<EtlRuntime>>({ id: 'core.etlRuntimes' }),
  /** Fusion runtimes by `runtime_key` (`fusion_llm`). */
  fusionRuntimes: createExtensionPoint<ExtensionRegistry<FusionRuntime>>({ id: 'core.fusionRuntimes' }),
  /** Object store backends by the name `[object_store] backend` selects (`local` is built in). */
  objectStores: createExtensionPoint<ExtensionRegistry<ObjectStoreBackend>>({ id: 'core.objectStores' }),
});
