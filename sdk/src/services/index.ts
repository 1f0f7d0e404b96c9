import { createServiceRef } from '../refs.js';
import type { AuditWriter } from './audit.js';
import type { Clock } from './clock.js';
import type { ConfigService } from './config.js';
import type { HealthService } from './health.js';
import type { HttpClient } from './http-client.js';
import type { JobScheduler } from './jobs.js';
import type { LifecycleService } from './lifecycle.js';
import type { Logger } from './logger.js';
import type { ObjectStore } from './object-store.js';
import type { SecretsService } from './secrets.js';
import type { UsageRecorder } from './usage.js';

export type { AuditEvent, AuditOutcome, AuditWriter } from './audit.js';
export type { Clock } from './clock.js';
export type { AppEnv, ConfigService } from './config.js';
export type { HealthCheckResult, HealthService } from './health.js';
export type { HttpClient, HttpRequestOptions, HttpStreamRequestOptions, HttpStreamResponse } from './http-client.js';
export type { JobDefinitionOptions, JobRun, JobScheduler } from './jobs.js';
export type { LifecycleService } from './lifecycle.js';
export type { Logger } from './logger.js';
export type { DownloadDescriptor, ObjectStore, StoredObjectInfo } from './object-store.js';
export type { SecretsService } from './secrets.js';
export type { ModelCallUsage, TokenUsageSource, UsageRecorder, UsageScope } from './usage.js';

/**
 * The services the kernel provides to every plugin. Those marked
 * plugin-scoped are a fresh instance per plugin (bound to its id).
 * @public
 */
export const coreServices = Object.freeze({
  /** Plugin-scoped child logger. */
  logger: createServiceRef<Logger>({ id: 'core.logger' }),
  /** Read-only host configuration. */
  config: createServiceRef<ConfigService>({ id: 'core.config' }),
  /** AES-256-GCM encryption of secrets at rest. */
  secrets: createServiceRef<SecretsService>({ id: 'core.secrets' }),
  /** Token usage and cost recording. */
  usage: createServiceRef<UsageRecorder>({ id: 'core.usage' }),
  /** Audit log writer. */
  audit: createServiceRef<AuditWriter>({ id: 'core.audit' }),
  /** Binary object storage. */
  objectStore: createServiceRef<ObjectStore>({ id: 'core.objectStore' }),
  /** Plugin-scoped background job scheduler (job names prefixed with the plugin id). */
  jobs: createServiceRef<JobScheduler>({ id: 'core.jobs' }),
  /** Time source. */
  clock: createServiceRef<Clock>({ id: 'core.clock' }),
  /** Outbound HTTP with timeouts. */
  http: createServiceRef<HttpClient>({ id: 'core.http' }),
  /** Plugin-scoped start and stop hooks. */
  lifecycle: createServiceRef<LifecycleService>({ id: 'core.lifecycle' }),
  /** Plugin-scoped health checks. */
  health: createServiceRef<HealthService>({ id: 'core.health' }),
});
