/**
 * One entry of the error-code catalog: the HTTP status an error with this code answers with (`null` for codes that
 * only travel inside an event stream or a WebSocket), and when it happens.
 * @public
 */
export interface ErrorCodeEntry {
  readonly status: number | null;
  readonly description: string;
}

/**
 * Every error `code` the host and its first-party plugins give, the same on HTTP error bodies, `POST /stream`
 * `error` events and WebSocket `error` events. Codes are stable: a client tells two errors apart by code, never by
 * the English text beside it. New codes are added; a code never changes meaning.
 * @public
 */
export const ERROR_CODES = {
  // Generic: the default of each error class, for refusals without a more specific code.
  BAD_REQUEST: { status: 400, description: 'The request is well-formed but cannot be served as sent.' },
  LOGIN_REQUIRED: { status: 401, description: 'The route needs an administrator login and the request carries none.' },
  PERMISSION_DENIED: { status: 403, description: 'The caller may not do this.' },
  NOT_FOUND: { status: 404, description: 'The resource does not exist.' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No route matches the method and path.' },
  METHOD_NOT_ALLOWED: { status: 405, description: 'The path exists but not with this method.' },
  CONFLICT: { status: 409, description: "The resource's state forbids the change." },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The body is larger than the configured limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'The body or file has a type the route does not take.' },
  VALIDATION_FAILED: { status: 422, description: 'The body or query failed validation; `errors[]` says where and why.' },
  RATE_LIMITED: { status: 429, description: 'A rate limit was reached; `Retry-After` says when to try again.' },
  INTERNAL_ERROR: { status: 500, description: 'An unexpected failure; the request id finds it in the log.' },
  UPSTREAM_FAILED: { status: 502, description: 'A service the host calls (model, embedder, tool, vector store) failed.' },
  SERVICE_UNAVAILABLE: { status: 503, description: 'The host is at capacity for this kind of request; retry shortly.' },
  DATABASE_UNAVAILABLE: { status: 503, description: 'The database does not answer; the request changed nothing. Retry after Retry-After seconds.' },
  UPSTREAM_TIMEOUT: { status: 504, description: 'A service the host calls did not answer in time.' },

  // Administrator access.
  SESSION_EXPIRED: { status: 401, description: 'The administrator session expired or was revoked; log in again.' },
  INVALID_LOGIN: { status: 401, description: 'Wrong username or password.' },
  API_TOKEN_INVALID: { status: 401, description: 'The API token in Authorization: Bearer is unknown, expired or revoked.' },
  REFRESH_TOKEN_INVALID: { status: 401, description: 'The refresh token is missing, expired or already used; log in again.' },
  PERMISSION_MISSING: { status: 403, description: 'The administrator lacks the permission the route needs.' },
  CROSS_SITE_REQUEST: { status: 403, description: 'A browser page of another site tried to use the administrator session.' },
  ACCOUNT_DISABLED: { status: 403, description: 'The administrator account is disabled.' },
  CHALLENGE_REQUIRED: { status: 403, description: 'A sensitive operation without a challenge token in `x-admin-challenge-token`.' },
  CHALLENGE_REFUSED: { status: 403, description: 'The challenge or its token is expired, used, burned or foreign; request a new challenge.' },
  CHALLENGE_NOT_FOUND: { status: 404, description: 'No such challenge of this administrator.' },
  API_TOKEN_NOT_FOUND: { status: 404, description: 'The administrator has no such API token.' },
  TOO_MANY_LOGIN_FAILURES: { status: 429, description: 'Too many failed password checks; wait, or log in again.' },
  TOO_MANY_CHALLENGES: { status: 429, description: 'Too many challenges requested in a minute.' },

  // Administrator users and system settings.
  ADMIN_USER_NOT_FOUND: { status: 404, description: 'No such administrator.' },
  ADMIN_USER_EXISTS: { status: 409, description: 'An administrator with this username exists.' },
  SELF_CHANGE_REFUSED: { status: 403, description: 'Administrators do not change their own role, status, grants or account this way.' },
  SUPER_ADMIN_REQUIRED: { status: 403, description: 'Only a super admin may do this on this host.' },
  PERMISSION_NOT_HELD: { status: 403, description: 'Permissions are granted only by administrators who hold them.' },
  PROTECTED_SUPER_ADMIN: { status: 409, description: 'A protected super admin is deleted only with break-glass-delete.' },
  LAST_SUPER_ADMIN: { status: 409, description: 'The last active super admin cannot be removed.' },
  GRANT_NOT_FOUND: { status: 404, description: 'No such active permission grant.' },
  GRANT_REFUSED: { status: 409, description: 'Permissions are granted to sub admins only.' },
  SETTING_NOT_FOUND: { status: 404, description: 'No such system setting.' },
  SETTING_VALUE_INVALID: { status: 400, description: 'The value does not fit the system setting.' },
  CURSOR_INVALID: { status: 400, description: 'The paging cursor was not issued by this host; start from the first page.' },

  // Agents.
  AGENT_NOT_FOUND: { status: 404, description: 'No such agent.' },
  AGENT_VERSION_NOT_FOUND: { status: 404, description: 'No such version of the agent.' },
  AGENT_NOT_PUBLISHABLE: { status: 409, description: 'Nothing runs a published snapshot of this agent type.' },
  AGENT_TYPE_CHANGE_REFUSED: { status: 409, description: "The agent's type cannot change while its configuration depends on it." },
  AGENT_TYPE_UNSUPPORTED: { status: 409, description: 'The feature serves another agent type.' },

  // Chat turns: answered before a stream opens, or `error` events once it streams (status `null`).
  MESSAGE_EMPTY: { status: 422, description: 'The message is empty.' },
  MESSAGE_TOO_LONG: { status: 422, description: 'The message is longer than [agent] message_max_length.' },
  AGENT_REQUIRED: { status: 422, description: 'Anonymous chat goes through a public agent: agent_id is required.' },
  AGENT_INACTIVE: { status: 409, description: 'The agent is not active.' },
  AGENT_NOT_PUBLIC: { status: 403, description: 'The caller may not chat with this agent through this route.' },
  SESSION_NOT_FOUND: { status: 404, description: 'No such session, or not one this caller may continue.' },
  SESSION_AGENT_MISMATCH: { status: 409, description: 'The session belongs to another agent.' },
  TURN_NOT_FOUND: { status: 404, description: 'No such turn in the session.' },
  SESSION_BUSY: {
    status: 409,
    description: "The session is answering another message: its agent's multitask_strategy is reject, or the wait in line ran out.",
  },
  NO_TURN_RUNNING: { status: 409, description: 'The session is not answering anything to cancel.' },
  TURN_CANCELLED: { status: null, description: 'An administrator cancelled the turn.' },
  MODEL_OVERRIDE_REFUSED: { status: 403, description: 'The agent does not take model_name, model_provider or model_temperature from public clients.' },
  UNKNOWN_MODEL: { status: 422, description: 'The model_provider, or the model it names, is not in the model catalog.' },
  AGENT_LIMIT_REACHED: { status: null, description: "The agent's request or token limit for the period is reached." },
  QUOTA_REACHED: { status: null, description: "The caller's daily quota is used up." },
  AGENT_BUSY: { status: null, description: 'The agent is answering its maximum of concurrent requests.' },
  RUNTIME_UNAVAILABLE: { status: null, description: "The agent's chat runtime is not enabled on this host." },
  MODEL_FAILED: { status: null, description: 'The model failed to answer.' },
  RUNTIME_ERROR: { status: null, description: 'The chat runtime reported a failure within the turn (a tool, a skill, a step).' },

  // Human takeover and WebSocket sessions.
  TAKEOVER_NOT_ENABLED: { status: 409, description: "The session's agent does not allow human takeover." },
  SESSION_TAKEN_OVER: { status: 409, description: 'Another operator holds the session.' },
  SESSION_NOT_TAKEN_OVER: { status: 409, description: 'The session is not taken over.' },
  OPERATOR_MISMATCH: { status: 403, description: "The operator named is not the caller's own administrator id." },
  MESSAGE_REFUSED: { status: null, description: 'An inbound WebSocket event was refused; `detail` says why.' },
  TOO_MANY_EVENTS: { status: null, description: 'A socket sent events faster than the host answers them.' },
  SESSION_REVOKED: { status: null, description: "The socket's administrator session ended." },
  PERMISSION_REVOKED: { status: null, description: 'The administrator lost the permission to watch the session.' },
  SESSION_NOT_PUBLIC: { status: null, description: "The session's agent is no longer public." },

  // Evaluation.
  EVALUATION_DATASET_NOT_FOUND: { status: 404, description: 'No such evaluation dataset.' },
  EVALUATION_SOURCE_CSV_NOT_FOUND: { status: 404, description: 'The evaluation dataset has no source CSV (none was imported).' },
  EVALUATION_DATASET_FROZEN: { status: 409, description: 'The evaluation dataset is a frozen snapshot: it never changes and is not frozen again.' },
  EVALUATION_DATASET_TASK_TYPE: {
    status: 409,
    description: "The operation does not fit the dataset's task_type (a CSV import into a document_recognition dataset).",
  },
  EVALUATION_DATASET_NOT_FROZEN: { status: 409, description: 'Evaluation runs use frozen snapshots only; freeze the dataset and run on the snapshot.' },
  EVALUATION_RUN_NOT_FOUND: { status: 404, description: 'The agent has no such evaluation run.' },
  EVALUATION_RUN_NOT_FINISHED: { status: 409, description: 'The evaluation run has not completed: a gate judges, and a comparison uses, completed runs only.' },
  EVALUATION_RUNS_NOT_COMPARABLE: {
    status: 409,
    description: 'The two evaluation runs used different snapshots; only runs of the same snapshot compare item by item.',
  },
  EVALUATION_DATASET_EMPTY: { status: 400, description: 'The evaluation dataset has no items to freeze.' },
  EVALUATION_DATASET_NO_SOURCE_CSV: { status: 400, description: 'The evaluation dataset has items but no persisted source CSV to copy into a snapshot.' },
  DATASET_REFERENCED_BY_EVALUATION_RUNS: {
    status: 409,
    description: 'The evaluation dataset is referenced by evaluation runs or frozen snapshots; the detail object counts them.',
  },
  // Fusion and public API keys.
  AGENT_NOT_FUSION: { status: 409, description: 'The operation is for fusion agents only (Fusion runs, public API keys).' },
  FUSION_DEFINITION_MISSING: { status: 409, description: 'The Fusion agent has no fusion_definition to run; set it with PATCH /agents/{agent_id}.' },
  FUSION_NOT_PUBLISHED: {
    status: 409,
    description: 'The Fusion agent has no published version; public callers run only the published version (POST /agents/{agent_id}/publish).',
  },
  FUSION_VERSION_NOT_CURRENT: {
    status: 409,
    description: 'The agent_version_id given is not the published version; public callers run only the published version.',
  },
  FUSION_RUN_NOT_FOUND: { status: 404, description: 'The agent has no such Fusion run (on the public routes: none the caller made on the published version).' },
  FUSION_INPUT_NOT_FOUND: { status: 404, description: 'The Fusion run has no file input with this id.' },
  FUSION_INPUT_TOO_LARGE: { status: 413, description: "A file input is larger than its slot's max_size_bytes or [fusion] max_file_bytes." },
  FUSION_INPUT_TYPE: { status: 415, description: "A file input's content type is not one its slot accepts." },
  PUBLIC_API_KEY_NOT_FOUND: { status: 404, description: 'The agent has no such public API key.' },
  PUBLIC_API_KEY_INVALID: { status: 401, description: 'The x-agent-api-key header is missing, malformed, unknown, for another agent, expired or revoked.' },
  FUSION_OUTPUT_INVALID: {
    status: null,
    description: "A failed Fusion run's error: its outputs did not match the definition after one repair attempt; validation_errors lists why.",
  },
  FUSION_RUNTIME_FAILED: {
    status: null,
    description: "A failed Fusion run's error: the runtime or its model failed (the model timeout included); the message says how.",
  },
  FUSION_RUNTIME_MISSING: { status: null, description: "A failed Fusion run's error: no enabled plugin provides the definition's runtime_key." },
  FUSION_WORKER_LOST: { status: null, description: "A failed Fusion run's error: its worker stopped [fusion] max_attempts times, so the run was given up." },
  // ETL jobs.
  AGENT_NOT_ETL: { status: 409, description: 'The operation is for etl agents only (ETL jobs).' },
  ETL_JOB_NOT_FOUND: { status: 404, description: 'The agent has no such ETL job (on the public routes: none the caller made).' },
  ETL_JOB_RUNNING: { status: 409, description: 'The ETL job is running; it can be deleted once it has ended.' },
  ETL_OUTPUT_NOT_READY: { status: 409, description: 'The ETL job has no output yet (it has not succeeded).' },
  ETL_FILE_TOO_LARGE: { status: 413, description: 'A source CSV over [etl] max_source_bytes, or a target-schema CSV over [etl] max_schema_bytes.' },
  ETL_FILE_TYPE: { status: 415, description: 'An ETL upload that is not a CSV (text/csv).' },
  ETL_RUNTIME_MISSING: { status: null, description: "A failed ETL job's error: no enabled plugin provides [etl] runtime_key." },
  ETL_PLAN_FAILED: { status: null, description: "A failed ETL job's error: the runtime could not make the column plan (its model failed, say)." },
  ETL_PLAN_INVALID: { status: null, description: "A failed ETL job's error: the runtime's plan does not map the target columns in order from source columns." },
  ETL_CONVERSION_FAILED: { status: null, description: "A failed ETL job's error: reading the source or writing the output failed part of the way." },
  ETL_WORKER_LOST: { status: null, description: "A failed ETL job's error: its worker stopped [etl] max_attempts times, so the job was given up." },
  // Document recognition.
  RUNTIME_AGENT_NOT_FOUND: { status: 404, description: 'No registered runtime agent has this id (on the public routes: none that takes runs now).' },
  RUNTIME_AGENT_NOT_PUBLISHED: { status: 409, description: 'The fusion agent has not published a version, so it cannot be registered as a runtime agent.' },
  RUNTIME_AGENT_UNSUITABLE: {
    status: 422,
    description:
      'The published definition cannot serve document recognition: it needs exactly one file input, no other required input, and a document_field_set output with fields.',
  },
  RUNTIME_AGENT_UNAVAILABLE: {
    status: 409,
    description: 'The runtime agent takes no runs now: it is inactive, or its published version no longer fits document recognition.',
  },
  DOCUMENT_EMPTY: { status: 400, description: 'The uploaded document has no bytes.' },
  DOCUMENT_TOO_LARGE: {
    status: 413,
    description: "The uploaded document is larger than the runtime agent's file slot or [document_recognition] max_file_bytes allows.",
  },
  DOCUMENT_TYPE: { status: 415, description: "The uploaded document's type is not one both the runtime agent's file slot and the recognizer take." },
  DOCUMENT_RECOGNITION_RUN_NOT_FOUND: { status: 404, description: 'No such document-recognition run (on the public routes: none the caller made).' },
  DOCUMENT_RECOGNITION_FIELD_NOT_FOUND: {
    status: 404,
    description: 'The document-recognition run has no such field (a run has fields once it has succeeded).',
  },
  DOCUMENT_RECOGNITION_FILE_NOT_FOUND: {
    status: 404,
    description: 'The run has no such file yet: a PDF rendition, preview or result exists once the run has made it.',
  },
  DOCUMENT_RECOGNITION_RUN_NOT_REVIEWED: {
    status: 409,
    description: 'A run to import into an evaluation dataset has not succeeded, or has fields still unreviewed.',
  },
  EVALUATION_ITEM_DUPLICATE_RUN: { status: 409, description: 'The dataset already holds an item imported from this document-recognition run.' },
  DOCUMENT_RECOGNIZER_MISSING: {
    status: null,
    description: "A failed document-recognition run's error: no enabled plugin provides [document_recognition] recognizer_key.",
  },
  DOCUMENT_RECOGNITION_WORKER_LOST: {
    status: null,
    description: "A failed document-recognition run's error: its worker stopped [document_recognition] max_attempts times, so the run was given up.",
  },
  // Scheduled tasks.
  SCHEDULED_TASK_NOT_FOUND: { status: 404, description: 'No such scheduled task.' },
  SCHEDULED_TASK_NOT_ACTIVE: { status: 409, description: 'The scheduled task was cancelled or has completed; it cannot be cancelled again.' },
  SCHEDULED_TASK_LIMIT: {
    status: 409,
    description: 'The session or the agent has [scheduled_tasks] max_active_per_session or max_active_per_agent active tasks.',
  },
  SCHEDULING_NOT_ALLOWED: {
    status: 403,
    description: 'This caller may not schedule tasks on the agent (anonymous sessions need [scheduled_tasks] allow_anonymous).',
  },

  // Knowledge.
  KNOWLEDGE_SOURCE_NOT_FOUND: { status: 404, description: 'No such knowledge source.' },
  MANAGED_SOURCE_READ_ONLY: { status: 409, description: 'A managed_correction source changes only through corrections.' },
  DOCUMENT_NOT_FOUND: { status: 404, description: 'No such document in the knowledge source.' },
  DOCUMENT_NOT_PARSED: { status: 409, description: 'The document has no parse snapshot yet.' },
  DOCUMENT_UNREADABLE: { status: 400, description: 'The document cannot be parsed (damaged, encrypted, or past a parse limit).' },
  UNSUPPORTED_DOCUMENT_TYPE: { status: 415, description: 'No parser handles the document type, or its content is not what it claims.' },
  UPLOAD_TOO_LARGE: { status: 413, description: 'The file is larger than [knowledge] upload_max_bytes.' },
  UPLOADS_BUSY: { status: 503, description: 'The host is receiving [knowledge] upload_concurrency uploads already.' },
  INGESTION_JOB_NOT_FOUND: { status: 404, description: 'No such ingestion job.' },
  INGESTION_JOB_ACTIVE: { status: 409, description: 'An ingestion job of the source is still queued or running.' },
  INSPECT_RUN_NOT_FOUND: { status: 404, description: 'No such inspect run.' },
  MOUNT_NOT_FOUND: { status: 404, description: 'The agent has no such mount.' },
  MOUNT_EXISTS: { status: 409, description: 'The source, server or skill is already mounted on the agent.' },
  CORRECTION_CONFLICT: { status: 409, description: 'The correction changed meanwhile, or is being or was already published.' },
  TURN_NOT_CORRECTABLE: { status: 409, description: 'The turn has no agent answer, or no correction draft, to act on.' },
  OBJECT_NOT_FOUND: { status: 404, description: 'No such object in the object store.' },
  OBJECT_KEY_INVALID: { status: 400, description: 'The object key is not valid.' },
  VECTOR_STORE_MISMATCH: { status: 409, description: "The vector collection's space or dimension differs from the embedder's." },

  // Skills.
  SKILL_NOT_FOUND: { status: 404, description: 'No such skill.' },
  SKILL_EXISTS: { status: 409, description: 'A skill with this name exists.' },
  SKILL_INACTIVE: { status: 409, description: 'Only active skills are mounted.' },
  SKILL_VERSION_NOT_FOUND: { status: 404, description: 'No such skill version.' },
  SKILL_VERSION_NOT_RELEASED: { status: 409, description: 'The skill version is not released; release it first.' },
  SKILL_VERSION_RELEASED: { status: 409, description: 'The skill version is released and immutable; create a new version.' },
  SKILL_BACKEND_UNAVAILABLE: { status: 409, description: "No enabled plugin provides the skill version's backend, or the backend refuses it." },

  // MCP tools.
  MCP_SERVER_NOT_FOUND: { status: 404, description: 'No such MCP server.' },
  MCP_SERVER_EXISTS: { status: 409, description: 'An MCP server with this name exists.' },
  MCP_SERVER_IN_USE: { status: 409, description: 'The MCP server is mounted on agents; unmount it first.' },
  MCP_SERVER_NOT_MOUNTED: { status: 409, description: 'The MCP server is not mounted and active on the agent.' },
  MCP_TRANSPORT_UNAVAILABLE: { status: 409, description: "No enabled plugin provides the server's transport." },
  TOOL_NOT_ALLOWED: { status: 409, description: "The tool is not in the mount's allowed tools." },
  TOOL_APPROVAL_NOT_FOUND: { status: 404, description: 'No such tool approval.' },
  TOOL_APPROVAL_DECIDED: { status: 409, description: 'The tool approval was already decided.' },
  CREDENTIAL_NOT_FOUND: { status: 404, description: 'No such credential.' },
  CREDENTIAL_IN_USE: { status: 409, description: 'The credential is used by MCP servers.' },
  CREDENTIAL_SCOPE_MISMATCH: { status: 409, description: 'The credential is scoped to another server.' },
  CREDENTIAL_DESTINATION_REFUSED: { status: 409, description: "The credential may not be sent to the server's destination." },
  CREDENTIAL_CONFIRMATION_REQUIRED: { status: 409, description: 'The change would send a credential to a new destination; repeat it with confirm_credential.' },
  SECRET_MISSING: { status: 400, description: 'A secret the configuration names is not set.' },
} as const satisfies Record<string, ErrorCodeEntry>;

/**
 * A code of the catalog.
 * @public
 */
export type ErrorCode = keyof typeof ERROR_CODES;
