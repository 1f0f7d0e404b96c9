import { NotFoundError, type ErrorCode } from '@agent-host/sdk';

/**
 * Path parameters that name a row by its UUID, with the refusal when the value cannot name one. Checked before the
 * handler (server.ts) and published as `format: uuid` (openapi/openapi-document.ts); `session_id` (a client's
 * thread id) and `config_key` (a setting's name) are text.
 */
const UUID_PARAMS: Record<string, { code: ErrorCode; what: string }> = {
  admin_user_id: { code: 'ADMIN_USER_NOT_FOUND', what: 'administrator' },
  agent_id: { code: 'AGENT_NOT_FOUND', what: 'agent' },
  approval_id: { code: 'TOOL_APPROVAL_NOT_FOUND', what: 'tool approval' },
  challenge_id: { code: 'CHALLENGE_NOT_FOUND', what: 'challenge' },
  credential_id: { code: 'CREDENTIAL_NOT_FOUND', what: 'credential' },
  document_id: { code: 'DOCUMENT_NOT_FOUND', what: 'document' },
  grant_id: { code: 'GRANT_NOT_FOUND', what: 'grant' },
  job_id: { code: 'INGESTION_JOB_NOT_FOUND', what: 'ingestion job' },
  mcp_server_id: { code: 'MCP_SERVER_NOT_FOUND', what: 'MCP server' },
  mount_id: { code: 'MOUNT_NOT_FOUND', what: 'mount' },
  run_id: { code: 'INSPECT_RUN_NOT_FOUND', what: 'inspect run' },
  skill_id: { code: 'SKILL_NOT_FOUND', what: 'skill' },
  source_id: { code: 'KNOWLEDGE_SOURCE_NOT_FOUND', what: 'knowledge source' },
  token_id: { code: 'API_TOKEN_NOT_FOUND', what: 'API token' },
  turn_id: { code: 'TURN_NOT_FOUND', what: 'turn' },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a UUID parameter of `path` names: `version_id` is an agent's or a skill's version. */
export function uuidParam(path: string, name: string): { code: ErrorCode; what: string } | undefined {
  if (name === 'version_id') return path.startsWith('/skills/') ? { code: 'SKILL_VERSION_NOT_FOUND', what: 'skill version' } : { code: 'AGENT_VERSION_NOT_FOUND', what: 'agent version' };
  return UUID_PARAMS[name];
}

/** Refuses (404) a path whose UUID parameter is not a UUID: no row can have that id, and the database would reject it. */
export function refuseMalformedIds(path: string, params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    const param = uuidParam(path, name);
    if (param && !UUID.test(value)) throw new NotFoundError(`no ${param.what} ${value}: it is not a UUID`, { code: param.code });
  }
}
