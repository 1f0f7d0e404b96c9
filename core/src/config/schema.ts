import { DEFAULT_GROUNDING_TEXTS } from '@agent-host/sdk';
import { z } from 'zod';

const appEnv = z.enum(['development', 'staging', 'production', 'test']);

/** One entry of the model catalog served by `GET /models`. */
const catalogModel = z
  .object({
    model_name: z.string().min(1),
    model_provider: z.string().min(1),
    display_name: z.string().default(''),
    description: z.string().min(1),
    category: z.string().min(1),
    /** Provider options for this model, for example `base_url`. */
    options: z.record(z.string(), z.unknown()).default({}),
    /** USD per 1,000,000 input tokens, for estimated cost (spec 2.5); unset = not priced. */
    input_price_per_million_tokens: z.number().nonnegative().optional(),
    /** USD per 1,000,000 output tokens, for estimated cost (spec 2.5); unset = not priced. */
    output_price_per_million_tokens: z.number().nonnegative().optional(),
  })
  .strict();

/** The whole host configuration; section names follow the interface spec. */
export const configSchema = z
  .object({
    app: z
      .object({
        env: appEnv.default('development'),
        instance_name: z.string().default(''),
        data_dir: z.string().min(1).default('./data'),
        cache_dir: z.string().default(''),
      })
      .strict(),
    server: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        shutdown_timeout_seconds: z.number().positive().default(8),
        /** Proxies (addresses or CIDRs) whose `X-Forwarded-For` names the client; empty = the socket's address. */
        trusted_proxies: z.array(z.string().min(1)).default([]),
        /** Sites (scheme://host[:port]) whose pages may call this host with the administrator's cookies; CORS is off without. */
        cors_origins: z.array(z.string().regex(/^https?:\/\/[^/]+$/, 'an origin: scheme://host[:port], no path')).default([]),
      })
      .strict(),
    logging: z
      .object({
        level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
        format: z.enum(['auto', 'json', 'pretty']).default('auto'),
      })
      .strict(),
    database: z
      .object({
        url: z.string().default(''),
        migrate_on_start: z.boolean().default(true),
        pool_max: z.number().int().positive().default(10),
        embedded_port: z.number().int().min(0).max(65535).default(0),
      })
      .strict(),
    jobs: z
      .object({
        backend: z.enum(['postgres', 'mongodb']).default('postgres'),
        mongodb_url: z.string().default(''),
        process_every: z.string().default('2 seconds'),
      })
      .strict(),
    chroma: z
      .object({
        url: z.string().default(''),
        embedded_version: z.string().min(1).default('1.5.9'),
        python: z.string().min(1).default('python3'),
        startup_timeout_seconds: z.number().positive().default(120),
      })
      .strict(),
    plugins: z
      .object({
        enabled: z.array(z.string().min(1)).default([]),
        disabled: z.array(z.string().min(1)).default([]),
        extra: z.array(z.string().min(1)).default([]),
        dir: z.string().default(''),
        optional: z.array(z.string().min(1)).default([]),
        init_timeout_seconds: z.number().positive().default(30),
      })
      .catchall(z.record(z.string(), z.unknown())),
    agent: z
      .object({
        system_prompt_max_length: z.number().int().positive().default(30000),
        judge_prompt_max_length: z.number().int().positive().default(30000),
        default_orchestrator_key: z.string().min(1),
        message_max_length: z.number().int().positive().default(8000),
        history_message_limit: z.number().int().min(0).default(20),
        per_caller_daily_requests: z.number().int().min(0).default(500),
        turn_queue_timeout_seconds: z.number().int().positive().default(120),
      })
      .strict(),
    http: z
      .object({
        /** Hosts, addresses or CIDRs that URLs from the API (tool servers, URL tools) may reach although not public. */
        allowed_private_hosts: z.array(z.string().min(1)).default([]),
        max_response_bytes: z
          .number()
          .int()
          .positive()
          .default(10 * 1024 * 1024),
        max_redirects: z.number().int().min(0).default(5),
      })
      .strict(),
    rate_limits: z
      .object({
        stream_per_ip_per_minute: z.number().int().min(0).default(60),
        stream_per_session_per_minute: z.number().int().min(0).default(30),
        anonymous_per_minute: z.number().int().min(0).default(1200),
        socket_handshakes_per_ip_per_minute: z.number().int().min(0).default(60),
      })
      .strict(),
    models: z
      .object({
        default_model_provider: z.string().min(1),
        default_model_name: z.string().min(1),
        catalog: z.array(catalogModel).default([]),
      })
      .strict(),
    timeouts: z
      .object({
        model_request_seconds: z.number().positive().default(60),
        http_request_seconds: z.number().positive().default(30),
      })
      .strict(),
    mcp: z
      .object({
        history_user_message_window: z.number().int().min(0).default(3),
        raw_passthrough_tool_keys: z.array(z.string()).default([]),
        raw_passthrough_wrap_json_code_block: z.boolean().default(false),
        /** The characters of one tool result a runtime (and so the model) gets; past it the result is cut, saying so. */
        result_context_chars: z.number().int().min(100).default(20_000),
        /** Whether sub admins holding mcp.write may create and change stdio servers (programs the host runs). */
        sub_admins_manage_stdio_servers: z.boolean().default(false),
        /** Executables stdio MCP servers may run (read by the tools-mcp plugin); unset: a development default. */
        stdio_allowed_commands: z
          .array(
            z.union([
              z.string().min(1),
              z.object({ command: z.string().min(1), args_prefix: z.array(z.string()).optional(), env: z.array(z.string()).optional() }).strict(),
            ]),
          )
          .optional(),
      })
      .strict(),
    scheduled_tasks: z
      .object({
        enabled: z.boolean().default(true),
        max_active_per_session: z.number().int().min(1).default(20),
        max_active_per_agent: z.number().int().min(1).default(1000),
        min_interval_seconds: z.number().int().min(1).default(60),
        max_horizon_days: z.number().int().min(1).default(366),
        allow_anonymous: z.boolean().default(false),
        default_time_zone: z
          .string()
          .default('UTC')
          .refine((zone) => {
            try {
              return Boolean(new Intl.DateTimeFormat('en-US', { timeZone: zone }));
            } catch {
              return false;
            }
          }, 'is not an IANA time zone such as "Europe/Berlin" or "UTC"'),
        run_lease_seconds: z.number().int().min(5).default(60),
        supervisor_interval_seconds: z.number().int().min(1).default(10),
      })
      .strict(),
    demo_gateway: z.object({ enabled: z.boolean().default(false) }).strict(),
    evaluation: z
      .object({
        csv_max_bytes: z
          .number()
          .int()
          .min(1024)
          .default(5 * 1024 * 1024),
        csv_max_rows: z.number().int().min(1).default(10_000),
        enabled: z.boolean().default(true),
        runs_per_instance: z.number().int().min(1).default(2),
        item_concurrency: z.number().int().min(1).max(64).default(4),
        run_lease_seconds: z.number().int().min(5).default(60),
        supervisor_interval_seconds: z.number().int().min(1).default(10),
        max_attempts: z.number().int().min(1).default(3),
        pass_f1_threshold: z.number().min(0).max(1).default(0.8),
        gate: z
          .object({
            minimum_items: z.number().int().min(0).default(1),
            score_pass_rate_min: z.number().min(0).max(1).default(0.8),
            score_f1_min: z.number().min(0).max(1).default(0.6),
            max_failed_item_ratio: z.number().min(0).max(1).default(0.05),
            llm_judge_min: z.number().min(0).max(1).default(0.7),
          })
          .strict()
          .prefault({}),
      })
      .strict(),
    fusion: z
      .object({
        enabled: z.boolean().default(true),
        wait_seconds: z.number().int().min(0).max(300).default(30),
        max_file_bytes: z
          .number()
          .int()
          .min(1024)
          .default(20 * 1024 * 1024),
        runs_per_instance: z.number().int().min(1).default(32),
        run_lease_seconds: z.number().int().min(5).default(60),
        supervisor_interval_seconds: z.number().int().min(1).default(10),
        max_attempts: z.number().int().min(1).default(3),
        api_key_requests_per_minute: z.number().int().min(0).default(600),
        anonymous_runs_per_minute: z.number().int().min(0).default(60),
      })
      .strict(),
    etl: z
      .object({
        enabled: z.boolean().default(true),
        /** The ETL runtime jobs run through (set in default.toml: core names no plugin). */
        runtime_key: z.string().min(1),
        max_source_bytes: z
          .number()
          .int()
          .min(1024)
          .default(200 * 1024 * 1024),
        max_schema_bytes: z
          .number()
          .int()
          .min(1024)
          .default(256 * 1024),
        max_schema_columns: z.number().int().min(1).default(500),
        sample_rows: z.number().int().min(1).max(200).default(20),
        report_issue_cap: z.number().int().min(0).default(1000),
        progress_every_rows: z.number().int().min(1).default(5000),
        jobs_per_instance: z.number().int().min(1).default(2),
        job_lease_seconds: z.number().int().min(5).default(60),
        supervisor_interval_seconds: z.number().int().min(1).default(10),
        max_attempts: z.number().int().min(1).default(3),
        anonymous_jobs_per_minute: z.number().int().min(0).default(10),
      })
      .strict(),
    document_recognition: z
      .object({
        enabled: z.boolean().default(true),
        /** The document recognizer runs use (set in default.toml: core names no plugin). */
        recognizer_key: z.string().min(1),
        max_file_bytes: z
          .number()
          .int()
          .min(1024)
          .default(25 * 1024 * 1024),
        max_pages: z.number().int().min(1).default(200),
        preview_pages: z.number().int().min(0).max(20).default(3),
        preview_width_px: z.number().int().min(64).max(4000).default(1000),
        wait_seconds: z.number().int().min(0).max(300).default(0),
        runs_per_instance: z.number().int().min(1).default(4),
        run_lease_seconds: z.number().int().min(5).default(60),
        supervisor_interval_seconds: z.number().int().min(1).default(10),
        max_attempts: z.number().int().min(1).default(3),
        anonymous_runs_per_minute: z.number().int().min(0).default(30),
      })
      .strict(),
    grounding: z
      .object({
        refuse_text: z.string().min(1).default(DEFAULT_GROUNDING_TEXTS.refuse),
        clarify_text: z.string().min(1).default(DEFAULT_GROUNDING_TEXTS.clarify),
        handoff_text: z.string().min(1).default(DEFAULT_GROUNDING_TEXTS.handoff),
      })
      .strict(),
    observability: z
      .object({
        otlp_endpoint: z
          .string()
          .default('')
          .refine((v) => v === '' || /^https?:\/\/[^/]/.test(v), 'must be empty or an http(s) URL'),
        service_name: z.string().min(1).default('agent-host'),
        trace_url_template: z.string().default(''),
      })
      .strict(),
    admin: z
      .object({
        access_token_secret_key: z.string().default(''),
        access_cookie_secure: z.boolean().default(false),
        access_token_ttl_seconds: z.number().int().min(30).default(900),
        refresh_token_ttl_seconds: z.number().int().min(60).default(1_209_600),
        challenge_ttl_seconds: z.number().int().min(10).default(300),
        challenge_token_ttl_seconds: z.number().int().min(10).default(300),
        login_max_failures: z.number().int().min(2).default(5),
        login_lockout_seconds: z.number().int().min(1).default(300),
        bootstrap_username: z.string().default(''),
        bootstrap_password: z
          .string()
          .default('')
          .refine((v) => v === '' || v.length >= 12, 'the bootstrap password needs at least 12 characters (or leave it empty to have one generated)'),
        /** Whether a sub admin holding admin_permissions.write may create administrators with grants, grant and revoke. */
        sub_admins_manage_permissions: z.boolean().default(false),
      })
      .strict(),
    secrets: z
      .object({
        key: z.string().default(''),
        /** Keys that encrypted earlier values: they decrypt, never encrypt (`agent-host secrets reencrypt` moves values to `key`). */
        previous_keys: z.array(z.string()).default([]),
      })
      .strict(),
    object_store: z
      .object({
        backend: z.string().min(1).default('local'),
        local_dir: z.string().default(''),
        public_endpoint: z
          .string()
          .default('')
          .refine((v) => v === '' || /^https?:\/\/[^/]/.test(v), 'must be empty or an http(s) URL'),
      })
      .strict(),
    knowledge: z
      .object({
        /** Embedder registry key used for ingestion and retrieval (set in default.toml). */
        embedder: z.string().min(1),
        /** Retriever (vector store) registry key (set in default.toml). */
        retriever: z.string().min(1),
        upload_max_bytes: z
          .number()
          .int()
          .positive()
          .default(50 * 1024 * 1024),
        /** Uploads read at once per instance; past it a new one is refused with 503 and Retry-After. */
        upload_concurrency: z.number().int().min(1).default(4),
        default_top_k: z.number().int().min(1).max(50).default(5),
        default_score_threshold: z.number().min(0).max(1).default(0.2),
        /** Postgres text search configuration of the keyword fallback. */
        text_search_config: z
          .string()
          .regex(/^[a-z_][a-z0-9_]*$/)
          .default('english'),
        ingestion_lease_seconds: z.number().int().min(2).default(60),
        ingestion_supervisor_interval_seconds: z.number().int().min(1).default(30),
        /** How long indexing tries a document's vector writes again while the vector store cannot be reached; 0: once. */
        vector_retry_seconds: z.number().int().min(0).default(120),
      })
      .strict(),
    release: z
      .object({
        published_at: z.string().default(''),
        commit_sha: z.string().default(''),
        commit_subject: z.string().default(''),
        tag_name: z.string().default(''),
        tag_message: z.string().default(''),
        observability_release: z.string().default(''),
      })
      .strict(),
  })
  .strict();

export type HostConfig = z.output<typeof configSchema>;
export type CatalogModel = z.output<typeof catalogModel>;
