import { NotFoundError, type ErrorCode } from '@agent-host/sdk';

/**
 * Path parameters that name a row by its UUID, with the refusal when the value cannot name one. Checked before the
 * handler (server.ts) and published as `format: uuid` (openapi/openapi-document.ts).
 */
const UUID_PARAMS: Record<string, { code: ErrorCode; what: string }> = {
  admin_user_id: { code: 'ADMIN_USER_NOT_FOUND', what: 'administrator' },
  agent_id: { code: 'AGENT_NOT_FOUND', what: 'agent' },
  approval_id: { code: 'TOOL_APPROVAL_NOT_FOUND', what: 'tool approval' },
  challenge_id: { code: 'CHALLENGE_NOT_FOUND', what: 'challenge' },
  credential_id: { code: 'CREDENTIAL_NOT_FOUND', what: 'credential' },
  dataset_id: { code: 'EVALUATION_DATASET_NOT_FOUND', what: 'evaluation dataset' },
  document_id: { code: 'DOCUMENT_NOT_FOUND', what: 'document' },
  etl_job_id: { code: 'ETL_JOB_NOT_FOUND', what: 'ETL job' },
  evaluation_run_id: { code: 'EVALUATION_RUN_NOT_FOUND', what: 'evaluation run' },
  fusion_run_id: { code: 'FUSION_RUN_NOT_FOUND', what: 'Fusion run' },
  grant_id: { code: 'GRANT_NOT_FOUND', what: 'grant' },
  input_id: { code: 'FUSION_INPUT_NOT_FOUND', what: 'Fusion run input' },
  job_id: { code: 'INGESTION_JOB_NOT_FOUND', what: 'ingestion job' },
  key_id: { code: 'PUBLIC_API_KEY_NOT_FOUND', what: 'public API key' },
  mcp_server_id: { code: 'MCP_SERVER_NOT_FOUND', what: 'MCP server' },
  mount_id: { code: 'MOUNT_NOT_FOUND', what: 'mount' },
  recognition_run_id: { code: 'DOCUMENT_RECOGNITION_RUN_NOT_FOUND', what: 'document-recognition run' },
  run_id: { code: 'INSPECT_RUN_NOT_FOUND', what: 'inspect run' },
  runtime_agent_id: { code: 'RUNTIME_AGENT_NOT_FOUND', what: 'runtime agent' },
  skill_id: { code: 'SKILL_NOT_FOUND', what: 'skill' },
  source_id: { code: 'KNOWLEDGE_SOURCE_NOT_FOUND', what: 'knowledge source' },
  task_id: { code: 'SCHEDULED_TASK_NOT_FOUND', what: 'scheduled task' },
  token_id: { code: 'API_TOKEN_NOT_FOUND', what: 'API token' },
  turn_id: { code: 'TURN_NOT_FOUND', what: 'turn' },
};

/** Text path parameters, with the refusal for a value no row can have (a NUL character, which Postgres text refuses). */
const TEXT_PARAMS: Record<string, { code: ErrorCode; what: string }> = {
  session_id: { code: 'SESSION_NOT_FOUND', what: 'session' },
  config_key: { code: 'SETTING_NOT_FOUND', what: 'setting' },
  field_id: { code: 'DOCUMENT_RECOGNITION_FIELD_NOT_FOUND', what: 'document-recognition field' },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a UUID parameter of `path` names: `version_id` is an agent's or a skill's version. */
export function uuidParam(path: string, name: string): { code: ErrorCode; what: string } | undefined {
  if (name === 'version_id')
    return path.startsWith('/skills/')
      ? { code: 'SKILL_VERSION_NOT_FOUND', what: 'skill version' }
      : { code: 'AGENT_VERSION_NOT_FOUND', what: 'agent version' };
  return UUID_PARAMS[name];
}

/** The 404 a path parameter of `path` can cause, UUID or text; undefined for one that names no row. */
export const pathParamRefusal = (path: string, name: string) => uuidParam(path, name) ?? TEXT_PARAMS[name];

/**
 * Refuses (404) a path whose id no row can have: a UUID parameter that is not a UUID, a text one with a NUL
 * character. The database would reject either with an error, not an empty answer.
 */
export function refuseMalformedIds(path: string, params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    const uuid = uuidParam(path, name);
    if (uuid && !UUID.test(value)) throw new NotFoundError(`no ${uuid.what} ${value}: it is not a UUID`, { code: uuid.code });
    const text = TEXT_PARAMS[name];
    if (text && value.includes('\u0000')) throw new NotFoundError(`no ${text.what} with a NUL character in its name`, { code: text.code });
  }
}
