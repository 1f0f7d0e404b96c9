// @agent-host/sdk/testing: what a plugin's own tests use. The conformance suites state what every implementation of
// an extension point must do; the first-party plugins run them against themselves, and so can yours.
export { ConformanceError, type ConformanceRule } from './conformance.js';
export { embedderConformance } from './embedder-conformance.js';
export { documentParserConformance, type ParserSample } from './parser-conformance.js';
export { retrieverConformance } from './retriever-conformance.js';
export {
  fakeAgentSnapshot,
  fakeGrounding,
  fakeScheduling,
  fakeTurnContext,
  scriptedModel,
  type FakeGrounding,
  type FakeScheduling,
  type ModelCall,
  type ScriptedAnswer,
} from './fake-turn.js';
export { orchestratorConformance, runTurn } from './orchestrator-conformance.js';
export { objectStoreConformance } from './object-store-conformance.js';
export { toolBackendConformance, type ToolBackendSample, type ToolSample } from './tool-backend-conformance.js';
export { toolProviderConformance } from './tool-provider-conformance.js';
export { skillBackendConformance, type SkillBackendSample } from './skill-backend-conformance.js';
export { modelProviderConformance } from './model-provider-conformance.js';
export { fusionRuntimeConformance } from './fusion-runtime-conformance.js';
export { etlRuntimeConformance } from './etl-runtime-conformance.js';
export { documentRecognizerConformance, type RecognizerSample, type RecognizerSamples } from './document-recognizer-conformance.js';
export { startTestKernel, type TestKernel, type TestKernelOptions } from './test-kernel.js';
export type { JobRecord, LogRecord } from './fake-services.js';
