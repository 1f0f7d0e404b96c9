/**
 * Environment variables that override config keys. Every variable the
 * interface spec names is here; `docs/configuration.md` lists the same table.
 */
export interface EnvBinding {
  env: string;
  path: readonly [string, string];
  type: 'string' | 'boolean' | 'integer' | 'number' | 'list';
}

export const ENV_BINDINGS: readonly EnvBinding[] = [
  { env: 'APP_ENV', path: ['app', 'env'], type: 'string' },
  { env: 'AGENT_HOST_DATA_DIR', path: ['app', 'data_dir'], type: 'string' },
  { env: 'AGENT_HOST_CACHE_DIR', path: ['app', 'cache_dir'], type: 'string' },
  { env: 'AGENT_HOST_INSTANCE_NAME', path: ['app', 'instance_name'], type: 'string' },
  { env: 'HOST', path: ['server', 'host'], type: 'string' },
  { env: 'PORT', path: ['server', 'port'], type: 'integer' },
  { env: 'AGENT_HOST_TRUSTED_PROXIES', path: ['server', 'trusted_proxies'], type: 'list' },
  { env: 'AGENT_HOST_CORS_ORIGINS', path: ['server', 'cors_origins'], type: 'list' },
  { env: 'AGENT_HOST_HTTP_ALLOWED_PRIVATE_HOSTS', path: ['http', 'allowed_private_hosts'], type: 'list' },
  { env: 'LOG_LEVEL', path: ['logging', 'level'], type: 'string' },
  { env: 'LOG_FORMAT', path: ['logging', 'format'], type: 'string' },
  { env: 'DATABASE_URL', path: ['database', 'url'], type: 'string' },
  { env: 'AGENT_HOST_MIGRATE_ON_START', path: ['database', 'migrate_on_start'], type: 'boolean' },
  { env: 'AGENT_HOST_JOBS_BACKEND', path: ['jobs', 'backend'], type: 'string' },
  { env: 'MONGODB_URL', path: ['jobs', 'mongodb_url'], type: 'string' },
  { env: 'CHROMA_URL', path: ['chroma', 'url'], type: 'string' },
  { env: 'AGENT_HOST_PLUGINS_DISABLED', path: ['plugins', 'disabled'], type: 'list' },
  { env: 'AGENT_HOST_PLUGINS_EXTRA', path: ['plugins', 'extra'], type: 'list' },
  { env: 'AGENT_HOST_PLUGINS_DIR', path: ['plugins', 'dir'], type: 'string' },
  { env: 'AGENT_HOST_PLUGINS_OPTIONAL', path: ['plugins', 'optional'], type: 'list' },
  { env: 'AGENT_HOST_PLUGIN_INIT_TIMEOUT_SECONDS', path: ['plugins', 'init_timeout_seconds'], type: 'number' },
  { env: 'AGENT_SYSTEM_PROMPT_MAX_LENGTH', path: ['agent', 'system_prompt_max_length'], type: 'integer' },
  { env: 'AGENT_JUDGE_PROMPT_MAX_LENGTH', path: ['agent', 'judge_prompt_max_length'], type: 'integer' },
  { env: 'MODEL_REQUEST_TIMEOUT_SECONDS', path: ['timeouts', 'model_request_seconds'], type: 'number' },
  { env: 'MCP_RAW_PASSTHROUGH_WRAP_JSON_CODE_BLOCK', path: ['mcp', 'raw_passthrough_wrap_json_code_block'], type: 'boolean' },
  { env: 'SCHEDULED_TASKS_ENABLED', path: ['scheduled_tasks', 'enabled'], type: 'boolean' },
  { env: 'DEMO_GATEWAY_ENABLED', path: ['demo_gateway', 'enabled'], type: 'boolean' },
  { env: 'EVALUATION_ENABLED', path: ['evaluation', 'enabled'], type: 'boolean' },
  { env: 'FUSION_ENABLED', path: ['fusion', 'enabled'], type: 'boolean' },
  { env: 'ETL_ENABLED', path: ['etl', 'enabled'], type: 'boolean' },
  { env: 'DOCUMENT_RECOGNITION_ENABLED', path: ['document_recognition', 'enabled'], type: 'boolean' },
  { env: 'OTEL_EXPORTER_OTLP_ENDPOINT', path: ['observability', 'otlp_endpoint'], type: 'string' },
  { env: 'OTEL_SERVICE_NAME', path: ['observability', 'service_name'], type: 'string' },
  { env: 'ADMIN_ACCESS_TOKEN_SECRET_KEY', path: ['admin', 'access_token_secret_key'], type: 'string' },
  { env: 'ADMIN_ACCESS_COOKIE_SECURE', path: ['admin', 'access_cookie_secure'], type: 'boolean' },
  { env: 'ADMIN_BOOTSTRAP_USERNAME', path: ['admin', 'bootstrap_username'], type: 'string' },
  { env: 'ADMIN_BOOTSTRAP_PASSWORD', path: ['admin', 'bootstrap_password'], type: 'string' },
  { env: 'AGENT_HOST_SECRETS_KEY', path: ['secrets', 'key'], type: 'string' },
  { env: 'AGENT_HOST_SECRETS_PREVIOUS_KEYS', path: ['secrets', 'previous_keys'], type: 'list' },
  { env: 'OBJECT_STORE_PUBLIC_ENDPOINT', path: ['object_store', 'public_endpoint'], type: 'string' },
  { env: 'RELEASE_PUBLISHED_AT', path: ['release', 'published_at'], type: 'string' },
  { env: 'RELEASE_COMMIT_SHA', path: ['release', 'commit_sha'], type: 'string' },
  { env: 'RELEASE_COMMIT_SUBJECT', path: ['release', 'commit_subject'], type: 'string' },
  { env: 'RELEASE_TAG_NAME', path: ['release', 'tag_name'], type: 'string' },
  { env: 'RELEASE_TAG_MESSAGE', path: ['release', 'tag_message'], type: 'string' },
  { env: 'OBSERVABILITY_RELEASE', path: ['release', 'observability_release'], type: 'string' },
];

/** Prefix of the generic override `AGENT_HOST__<SECTION>__<KEY>=<TOML value>`. */
export const GENERIC_ENV_PREFIX = 'AGENT_HOST__';
