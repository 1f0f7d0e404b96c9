import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { coreServices, extensionPoints, type ExtensionPoint, type ExtensionRegistry, type Logger } from '@agent-host/sdk';
import type { Agenda } from 'agenda';
import type { Sequelize } from 'sequelize';
import { container as rootContainer } from 'tsyringe';
import { cacheDir } from './infra/cache-dir.js';
import { ensureChromaVenv } from './infra/chroma/chroma-venv.js';
import { chromaHeartbeat, EmbeddedChroma } from './infra/chroma/embedded-chroma.js';
import { loadConfig, productionGuardProblems } from './config/load.js';
import type { HostConfig } from './config/schema.js';
import { databaseFingerprint, openDatabase, redactUrl } from './db/database.js';
import { hearLostConnections } from './db/lost-connections.js';
import { EmbeddedPostgresServer } from './infra/postgres/embedded-postgres.js';
import { withAdvisoryLock } from './db/advisory-lock.js';
import { HostInstanceStore } from './db/host-instance-store.js';
import { runtimeConfigCache } from './db/runtime-config-cache.js';
import { migrate, pendingMigrations, STARTUP_LOCK } from './db/migrator.js';
import { createDomains, type Domains } from './domains.js';
import { buildHealthReport, type HealthReport } from './health/health-report.js';
import { SessionEvents } from './chat/session-events.js';
import { AgendaJobs } from './jobs/agenda-scheduler.js';
import { createAgenda } from './jobs/create-agenda.js';
import { Kernel } from './kernel/kernel.js';
import { DEFAULT_CONFIG_DIR, FIRST_PARTY_PLUGINS_DIR, MIGRATIONS_DIR } from './paths.js';
import { createAuditWriter } from './services/audit-store.js';
import { HealthRegistry } from './services/health.js';
import { createHttpClient } from './services/http-client.js';
import { createRootLogger } from './services/logger.js';
import { createLocalObjectStore } from './services/object-store-local.js';
import { SelectedObjectStore } from './services/object-store-selection.js';
import { createSecrets, parseSecretsKey, resolveGeneratedKey, resolveSecretsKey, type Keyring } from './services/secrets.js';
import { createUsageRecorder } from './services/usage.js';
import { unresolvedReferences } from './config/references.js';
import type { TurnTraceExporter } from './observability/turn-trace-exporter.js';

/** Start-up refused; the message says why and what to change. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

export interface AppOptions {
  configDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Use this logger instead of a new pino root logger. */
  logger?: Logger;
}

const EMBEDDED_DATABASE = 'agent_host';

/**
 * `[plugins] enabled`, then the `extra` ones it does not already list (one more plugin never restates the defaults),
 * then every package with an `agentHost` manifest directly inside `[plugins] dir`, by folder name.
 */
export function pluginSpecifiers(config: HostConfig): string[] {
  return [...new Set([...config.plugins.enabled, ...config.plugins.extra, ...pluginsInDir(config.plugins.dir)])];
}

function pluginsInDir(dir: string): string[] {
  if (!dir) return [];
  const root = path.resolve(dir);
  if (!existsSync(root)) throw new StartupError(`[plugins] dir ${root} (AGENT_HOST_PLUGINS_DIR) does not exist`);
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && hasManifest(path.join(root, entry.name)))
    .map((entry) => path.join(root, entry.name))
    .sort();
}

function hasManifest(dir: string): boolean {
  try {
    return typeof (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { agentHost?: unknown }).agentHost === 'object';
  } catch {
    return false;
  }
}

/**
 * The composition root: configuration, embedded services, database,
 * migrations, jobs and the plugin kernel. Transports (REST, CLI) sit on top.
 */
export class AgentHostApp {
  readonly instanceId: string;
  readonly health = new HealthRegistry();
  readonly kernel: Kernel;
  /** The backend `[object_store] backend` selects, once plugins have initialised; the download proxy reads it. */
  readonly objectStore = new SelectedObjectStore();
  databaseUrl = '';
  chromaUrl = '';
  /** Whether an enabled plugin registers the `chroma` retriever, so the host starts (or checks) Chroma. */
  private usesChroma = false;
  sequelize?: Sequelize;
  agenda?: Agenda;
  /** Configuration that names what no loaded plugin provides; start-up warnings (see `checkReferences`). */
  configurationProblems: string[] = [];
  /** Set when this start created the first super admin; a generated password is shown once. */
  bootstrapAdmin?: { username: string; generatedPassword?: string };
  private jobs?: AgendaJobs;
  private built?: Domains;
  private jobsStarted = false;
  private embeddedPostgres?: EmbeddedPostgresServer;
  private embeddedChroma?: EmbeddedChroma;
  private readonly cleanups: (() => Promise<void>)[] = [];
  private readonly container = rootContainer.createChildContainer();

  private constructor(
    readonly config: HostConfig,
    readonly logger: Logger,
  ) {
    this.instanceId = `${config.app.instance_name || os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    hearLostConnections(logger.child({ component: 'database' }));
    this.kernel = new Kernel({
      container: this.container,
      logger,
      specifiers: pluginSpecifiers(config),
      disabled: config.plugins.disabled,
      pluginsDir: FIRST_PARTY_PLUGINS_DIR,
      baseDir: process.cwd(),
      pluginConfig: (id) => (config.plugins as Record<string, unknown>)[id],
      initTimeoutMs: config.plugins.init_timeout_seconds * 1000,
      optional: config.plugins.optional,
      scopedServices: {
        [coreServices.logger.id]: (id) => logger.child({ plugin: id }),
        [coreServices.health.id]: (id) => this.health.forOwner(id),
        [coreServices.jobs.id]: (id) => this.requireJobs().forOwner(id),
        [coreServices.audit.id]: (id) => createAuditWriter(this.requireDatabase(), id),
        [coreServices.usage.id]: (id) => createUsageRecorder(this.requireDatabase(), id),
      },
    });
  }

  /** Loads and validates configuration; refuses production without its guards. */
  static create(options: AppOptions = {}): AgentHostApp {
    const config = loadConfig({ configDir: options.configDir ?? DEFAULT_CONFIG_DIR, env: options.env ?? process.env });
    const problems = productionGuardProblems(config);
    if (problems.length) throw new StartupError(`production guard refused start-up: ${problems.join('; ')}`);
    return new AgentHostApp(config, options.logger ?? createRootLogger(config.logging.level, config.logging.format));
  }

  /** Every domain, once `start()` has opened the database; the routes and the WebSocket gateway are built on them. */
  get domains(): Domains {
    if (!this.built) throw new Error('the host has not started: its domains do not exist yet');
    return this.built;
  }

  get dataDir(): string {
    return path.resolve(this.config.app.data_dir);
  }

  /**
   * The secrets service under the configured key, or the one generated into
   * the data directory; plugins get it, and `agent-host secrets encrypt` uses
   * it so that what it encrypts decrypts here.
   */
  secrets(): Keyring {
    mkdirSync(this.dataDir, { recursive: true });
    return createSecrets(resolveSecretsKey(this.config.secrets.key, this.dataDir), this.config.secrets.previous_keys.map(parseSecretsKey));
  }

  /** Starts everything; on failure, stops what had started and rethrows. */
  async start(): Promise<void> {
    try {
      mkdirSync(this.dataDir, { recursive: true });
      // The embedded vector store runs only for a plugin that declares its retriever; manifests are read, no plugin
      // code runs. A configured Chroma is handed to plugins either way.
      this.usesChroma = this.kernel.declares('retrievers', 'chroma');
      this.chromaUrl = this.config.chroma.url;
      // Side by side; when one fails, the other is let finish starting so that stop() stops it too (a Chroma refused
      // while initdb still ran left initdb behind).
      const embedded = await Promise.allSettled([this.startDatabase(), this.usesChroma ? this.startChroma() : undefined]);
      const failed = embedded.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      await this.openDatabase();
      const domains = this.buildDomains(await this.turnTraces());
      this.bootstrapAdmin = await domains.adminAuth.bootstrap();
      await this.startJobs();
      await domains.chat.start(this.requireJobs().forOwner('chat'));
      await domains.knowledge.start(this.requireJobs().forOwner('knowledge'));
      await domains.scheduledTasks.start(this.requireJobs().forOwner('scheduled-tasks'), domains.chat);
      await domains.evaluationRuns.start(this.requireJobs().forOwner('evaluation'), domains.chat);
      await domains.fusionRuns.start(this.requireJobs().forOwner('fusion'));
      await domains.etlJobs.start(this.requireJobs().forOwner('etl'));
      await domains.documentRecognition.start(this.requireJobs().forOwner('document-recognition'));
      this.registerCoreServices();
      this.registerCoreHealthChecks();
      await this.kernel.init();
      this.checkReferences();
      for (const listed of await domains.mcp.servers.listToolProviders())
        if (listed.created) this.logger.info(listed, 'tool provider listed as a tool server; mount it on agents to use its tools');
      this.selectObjectStore();
      await this.kernel.start();
      this.cleanups.push(() => this.kernel.stop());
      // Before the plugins stop: an evaluation item cut short is left for the next claim, not stored as failed.
      this.cleanups.push(() => domains.evaluationRuns.stop());
      this.cleanups.push(() => domains.scheduledTasks.stop());
      this.cleanups.push(() => domains.fusionRuns.stop());
      this.cleanups.push(() => domains.etlJobs.stop());
      this.cleanups.push(() => domains.documentRecognition.stop());
      await this.agenda!.start();
      this.jobsStarted = true;
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Stops in reverse order of start; safe to call more than once. */
  async stop(): Promise<void> {
    while (this.cleanups.length) {
      const cleanup = this.cleanups.pop()!;
      try {
        await cleanup();
      } catch (error) {
        this.logger.error({ err: error }, 'error during shutdown');
      }
    }
  }

  /**
   * Applies pending migrations without starting the rest (`agent-host migrate`); with `dryRun`, lists them and
   * applies none. A running host's database is used as it is.
   */
  async migrateOnly(options: { dryRun?: boolean } = {}): Promise<string[]> {
    try {
      mkdirSync(this.dataDir, { recursive: true });
      await this.startDatabase({ attach: true });
      this.sequelize = openDatabase(this.databaseUrl, this.config.database.pool_max);
      this.cleanups.push(() => this.sequelize!.close());
      return options.dryRun ? await pendingMigrations(this.sequelize, MIGRATIONS_DIR, this.logger) : await migrate(this.sequelize, MIGRATIONS_DIR, this.logger);
    } finally {
      await this.stop();
    }
  }

  /**
   * Opens the database (embedded unless DATABASE_URL; a running host's embedded one is used as it is) and migrates
   * it, nothing else; `stop()` closes it (`agent-host admin ...`).
   */
  async startDatabaseOnly(): Promise<Sequelize> {
    try {
      mkdirSync(this.dataDir, { recursive: true });
      await this.startDatabase({ attach: true });
      const sequelize = openDatabase(this.databaseUrl, this.config.database.pool_max);
      this.sequelize = sequelize;
      this.cleanups.push(() => sequelize.close());
      await migrate(sequelize, MIGRATIONS_DIR, this.logger);
      return sequelize;
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** The `/healthz` report. */
  async healthReport(): Promise<HealthReport> {
    return buildHealthReport({
      appEnv: this.config.app.env,
      instanceId: this.instanceId,
      databaseFingerprint: databaseFingerprint(this.databaseUrl),
      staticWarnings: this.staticWarnings(),
      checks: await this.health.run(2000),
    });
  }

  /**
   * `GET /readyz`: whether this instance can serve, from the checks of what it cannot serve without (database, job
   * store, vector store); a load balancer stops routing to it while `ready` is false.
   */
  async readinessReport(): Promise<{ ready: boolean; failing: { name: string; state: string; message: string }[] }> {
    const failing = (await this.health.run(2000, 'required'))
      .filter(({ result }) => result.state === 'failed')
      .map(({ name, result }) => ({ name, state: result.state, message: result.message ?? '' }));
    return { ready: failing.length === 0, failing };
  }

  private staticWarnings(): string[] {
    const warnings: string[] = [];
    if (!this.config.admin.access_token_secret_key.trim()) {
      warnings.push('ADMIN_ACCESS_TOKEN_SECRET_KEY is not set; administrator tokens are signed with a key generated into the data directory');
    }
    const defaultKey = this.config.agent.default_orchestrator_key;
    if (this.kernel.registry(extensionPoints.orchestrators).get(defaultKey)?.experimental)
      warnings.push(`default orchestrator "${defaultKey}" is experimental`);
    return [...warnings, ...this.configurationProblems];
  }

  /**
   * Configuration naming what no loaded plugin provides (see `unresolvedReferences`): refused in production,
   * warned about (log, banner, `/healthz`) elsewhere.
   */
  private checkReferences(): void {
    const loaded = {
      // A left-out optional plugin's section is not a typo: its refusal is reported on its own.
      pluginIds: [...this.kernel.plugins().map((p) => p.id), ...this.kernel.refused().map((refusal) => refusal.pluginId)],
      registered: (point: ExtensionPoint<ExtensionRegistry<unknown>>) => {
        const registry = this.kernel.registry(point);
        return { name: registry.name, keys: registry.list().map((entry) => entry.key) };
      },
    };
    this.configurationProblems = unresolvedReferences(this.config, loaded, pluginSpecifiers(this.config));
    if (this.configurationProblems.length && this.config.app.env === 'production') {
      throw new StartupError(`configuration refers to what no loaded plugin provides: ${this.configurationProblems.join('; ')}`);
    }
    for (const problem of this.configurationProblems) this.logger.warn(problem);
    // The kernel logged each already; the banner and /healthz show them too.
    this.configurationProblems.push(...this.kernel.refused().map((refusal) => `${refusal.message}; it is in [plugins] optional, so the host runs without it`));
  }

  /** `attach`: use the embedded cluster a running host owns on this data directory instead of refusing. */
  private async startDatabase(options: { attach?: boolean } = {}): Promise<void> {
    if (this.config.database.url) {
      this.databaseUrl = this.config.database.url;
      return;
    }
    const server = new EmbeddedPostgresServer({
      dataDir: this.dataDir,
      port: this.config.database.embedded_port,
      logger: this.logger,
    });
    const running = options.attach ? await server.runningUrl(EMBEDDED_DATABASE) : undefined;
    if (running) {
      this.databaseUrl = running;
      return;
    }
    await server.start();
    this.embeddedPostgres = server;
    this.cleanups.push(() => server.stop());
    await server.ensureDatabase(EMBEDDED_DATABASE);
    this.databaseUrl = server.url(EMBEDDED_DATABASE);
  }

  private async startChroma(): Promise<void> {
    const { chroma } = this.config;
    if (chroma.url) {
      this.chromaUrl = chroma.url;
      if (!(await chromaHeartbeat(chroma.url))) this.logger.warn({ url: chroma.url }, 'Chroma does not answer its heartbeat yet');
      return;
    }
    const executable = await ensureChromaVenv({
      cacheDir: cacheDir(this.config.app.cache_dir),
      version: chroma.embedded_version,
      python: chroma.python,
      logger: this.logger,
    });
    const server = new EmbeddedChroma({
      executable,
      dataDir: this.dataDir,
      startupTimeoutMs: chroma.startup_timeout_seconds * 1000,
      logger: this.logger,
    });
    this.cleanups.push(() => server.stop());
    await server.start();
    this.embeddedChroma = server;
    this.chromaUrl = server.url();
  }

  private async openDatabase(): Promise<void> {
    const sequelize = openDatabase(this.databaseUrl, this.config.database.pool_max);
    this.sequelize = sequelize;
    this.cleanups.push(() => sequelize.close());
    await sequelize.authenticate();
    if (this.config.database.migrate_on_start) {
      const applied = await migrate(sequelize, MIGRATIONS_DIR, this.logger);
      if (applied.length) this.logger.info({ count: applied.length, from: applied[0], to: applied.at(-1) }, 'migrations applied');
    }
    // Chat turns read agents and their mounts through this cache; it listens for changes from every instance.
    const configCache = runtimeConfigCache(sequelize);
    this.cleanups.push(() => configCache.close());
    await configCache.listen(this.databaseUrl, this.logger);
    const instances = new HostInstanceStore(sequelize);
    await instances.started(this.instanceId, this.config.app.env);
    this.cleanups.push(() => instances.stopped(this.instanceId));
    this.logger.info({ database: redactUrl(this.databaseUrl) }, 'database ready');
  }

  private buildDomains(traces: TurnTraceExporter | undefined): Domains {
    const configured = this.config.admin.access_token_secret_key.trim();
    this.built = createDomains({
      db: this.requireDatabase(),
      config: this.config,
      kernel: this.kernel,
      instanceId: this.instanceId,
      accessTokenKey: configured ? new TextEncoder().encode(configured) : resolveGeneratedKey(this.dataDir, 'admin-access.key'),
      secrets: this.secrets(),
      objectStore: this.objectStore,
      sessionEvents: new SessionEvents(),
      traces,
      logger: this.logger,
    });
    return this.built;
  }

  /** The OTLP exporter of turn traces, when `[observability] otlp_endpoint` names a collector. */
  private async turnTraces(): Promise<TurnTraceExporter | undefined> {
    const { otlp_endpoint: endpoint, service_name: serviceName } = this.config.observability;
    if (!endpoint) return undefined;
    // Loaded only when configured: the OpenTelemetry SDK and its OTLP exporter are a large share of a cold start.
    const { TurnTraceExporter } = await import('./observability/turn-trace-exporter.js');
    const exporter = new TurnTraceExporter({ endpoint, serviceName });
    this.cleanups.push(() => exporter.shutdown());
    this.logger.info({ endpoint }, 'exporting turn traces over OTLP');
    return exporter;
  }

  private async startJobs(): Promise<void> {
    // Connected before anything can fail, so a refused start never races a half-open job store.
    // While the database is away every reconnect attempt fails: one line per 10 s says so.
    let warnedAt = 0;
    const connectionLost = (error: Error) => {
      if (Date.now() - warnedAt < 10_000) return;
      warnedAt = Date.now();
      this.logger.warn({ err: error }, 'job store connection lost; it reconnects');
    };
    const connect = async () => {
      const created = await createAgenda(this.config, this.databaseUrl, this.instanceId, connectionLost);
      created.agenda.on('error', (error: Error) => this.logger.error({ err: error }, 'job store error'));
      await created.agenda.ready;
      return created;
    };
    // The Postgres backend creates its table as it connects, which instances starting together must not do at once.
    const { agenda, backend, closePool } =
      this.config.jobs.backend === 'postgres' ? await withAdvisoryLock(this.requireDatabase(), STARTUP_LOCK, connect) : await connect();
    this.agenda = agenda;
    this.jobs = new AgendaJobs(agenda, this.logger);
    const drainMs = (this.config.server.shutdown_timeout_seconds * 1000) / 2;
    this.cleanups.push(closePool);
    this.cleanups.push(async () => {
      // Agenda only disconnects what start() connected; a refused start never got there.
      if (!this.jobsStarted) return backend.disconnect();
      const result = await agenda.drain({ timeout: drainMs });
      if (result.timedOut)
        this.logger.warn({ running: result.running }, 'jobs still running at shutdown; another instance retakes them when their locks expire');
      await agenda.stop();
    });
  }

  private registerCoreServices(): void {
    const { config } = this;
    // Plugins see the Chroma the host uses, the embedded one included.
    const effective = { ...config, chroma: { ...config.chroma, url: this.chromaUrl } };
    const configService = {
      appEnv: config.app.env,
      section: (name: string) => {
        const value = (effective as unknown as Record<string, unknown>)[name];
        return value && typeof value === 'object' ? (structuredClone(value) as Record<string, unknown>) : undefined;
      },
    };
    const objectsDir = config.object_store.local_dir || path.join(this.dataDir, 'objects');
    const values: [string, unknown][] = [
      [coreServices.config.id, configService],
      [coreServices.secrets.id, this.secrets()],
      [coreServices.objectStore.id, this.objectStore],
      [coreServices.clock.id, { now: () => new Date() }],
      [
        coreServices.http.id,
        createHttpClient(config.timeouts.http_request_seconds * 1000, {
          allowedPrivateHosts: config.http.allowed_private_hosts,
          maxResponseBytes: config.http.max_response_bytes,
          maxRedirects: config.http.max_redirects,
        }),
      ],
    ];
    for (const [token, value] of values) this.container.register(token, { useValue: value });
    // Registered like a plugin's backend, so no plugin can claim the name `local`.
    this.kernel
      .registry(extensionPoints.objectStores)
      .forPlugin('core', { onRegister: () => undefined })
      .register('local', createLocalObjectStore(path.resolve(objectsDir)));
  }

  private selectObjectStore(): void {
    const registry = this.kernel.registry(extensionPoints.objectStores);
    const name = this.config.object_store.backend;
    const backend = registry.get(name);
    if (!backend) {
      const known = registry
        .list()
        .map((entry) => `"${entry.key}"`)
        .join(', ');
      throw new StartupError(`[object_store] backend "${name}" is not registered: enable the plugin that provides it, or choose one of ${known}`);
    }
    this.objectStore.use(backend);
    this.logger.info({ backend: name, provided_by: registry.ownerOf(name) }, 'object store selected');
  }

  private registerCoreHealthChecks(): void {
    const instances = new HostInstanceStore(this.requireDatabase());
    this.health.add(
      'postgres',
      async () => {
        await instances.ping();
        return { state: 'ok' };
      },
      { required: true },
    );
    this.health.add(
      'job_store',
      async () => {
        await this.agenda!.queryJobs({ limit: 1 });
        return { state: 'ok' };
      },
      { required: true },
    );
    if (!this.usesChroma) return;
    this.health.add(
      'chroma',
      async () => {
        if (await chromaHeartbeat(this.chromaUrl)) return { state: 'ok' };
        const restarts = this.embeddedChroma?.restarts;
        return {
          state: 'failed',
          message: `no heartbeat from ${this.chromaUrl}${restarts ? `; the embedded server exited and is being restarted (attempt ${restarts})` : ''}`,
        };
      },
      { required: true },
    );
  }

  private requireDatabase(): Sequelize {
    if (!this.sequelize) throw new Error('database not open yet');
    return this.sequelize;
  }

  private requireJobs(): AgendaJobs {
    if (!this.jobs) throw new Error('job scheduler not created yet');
    return this.jobs;
  }
}
