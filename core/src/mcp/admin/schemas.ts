import { z } from 'zod';

const name = z.string().trim().min(1).max(200);
const jsonObject = z.record(z.string(), z.unknown());

/** The server statuses an administrator sets; a failed health check sets `error`, a passing one `active`. */
export const SERVER_STATUSES = ['active', 'inactive', 'error'] as const;

const serverFields = {
  name,
  description: z.string().max(5000),
  transport_type: z.string().trim().min(1).max(64),
  connection_config: jsonObject,
  credential_schema: jsonObject.nullable(),
  credential_id: z.string().uuid().nullable(),
  status: z.enum(['active', 'inactive']),
};

export const serverCreateSchema = z.object(serverFields).partial().required({ name: true, transport_type: true, connection_config: true }).strict();
// `confirm_credential`: the server's credential may go to the destination this change points it at.
export const serverUpdateSchema = z
  .object({ ...serverFields, confirm_credential: z.boolean() })
  .partial()
  .strict();
export type ServerCreateInput = z.output<typeof serverCreateSchema>;
export type ServerUpdateInput = z.output<typeof serverUpdateSchema>;

/** `secret_payload`: named string values, each usable as a `<NAME>` placeholder in headers or env. */
const secretPayload = z
  .record(
    z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'a secret key is a placeholder name: letters, digits, _ . -'),
    z.string().min(1).max(16_384),
  )
  .refine((payload) => Object.keys(payload).length >= 1 && Object.keys(payload).length <= 50, 'secret_payload holds 1 to 50 values');

/** `shared`: any server may use the credential; `server`: only the server `mcp_server_id`. */
export const CREDENTIAL_SCOPES = ['shared', 'server'] as const;

const credentialFields = {
  name,
  description: z.string().max(5000),
  scope: z.enum(CREDENTIAL_SCOPES),
  mcp_server_id: z.string().uuid().nullable(),
  // Where the secret may be sent: URL origins (`https://api.example.com`) of http servers, commands of stdio ones.
  allowed_destinations: z
    .array(
      z
        .string()
        .trim()
        .min(1)
        .max(500)
        .transform((d) => (/^https?:\/\//i.test(d) && URL.canParse(d) ? new URL(d).origin : d)),
    )
    .max(50),
};

export const credentialCreateSchema = z
  .object({ ...credentialFields, secret_payload: secretPayload })
  .partial()
  .required({ name: true, secret_payload: true })
  .strict();
export const credentialUpdateSchema = z
  .object({ ...credentialFields, secret_payload: z.never({ error: 'the secret is changed by POST /mcp-credentials/{credential_id}/rotate' }) })
  .partial()
  .strict();
export const credentialRotateSchema = z.object({ secret_payload: secretPayload }).strict();
export type CredentialCreateInput = z.output<typeof credentialCreateSchema>;
export type CredentialUpdateInput = z.output<typeof credentialUpdateSchema>;

/** Mount policy defaults (spec 8 leaves them unnamed). */
export const MOUNT_DEFAULTS = { timeout_ms: 30_000, max_calls_per_turn: 3, priority: 0 } as const;

const mountFields = {
  // Empty or null: every tool the server lists.
  allowed_tools: z.array(z.string().trim().min(1).max(200)).max(500).nullable(),
  // Trimmed and lower-cased; blank clears it.
  tool_capability: z
    .string()
    .max(100)
    .nullable()
    .transform((v) => (v?.trim() ? v.trim().toLowerCase() : null)),
  timeout_ms: z.number().int().min(100).max(600_000),
  max_calls_per_turn: z.number().int().min(1).max(100),
  priority: z.number().int().min(-1000).max(1000),
  is_active: z.boolean(),
  // `operator`: each call of the mount's tools waits for an operator's approval (the approval checkpoint).
  approval: z.enum(['none', 'operator']),
};

export const mountCreateSchema = z
  .object({ mcp_server_id: z.string().uuid(), ...mountFields })
  .partial()
  .required({ mcp_server_id: true })
  .strict();
export const mountUpdateSchema = z.object(mountFields).partial().strict();
export type McpMountCreateInput = z.output<typeof mountCreateSchema>;
export type McpMountUpdateInput = z.output<typeof mountUpdateSchema>;

export const testCallSchema = z
  .object({
    action: z.enum(['tools/list', 'tools/call']),
    tool_name: z.string().trim().min(1).max(200).optional(),
    arguments: jsonObject.optional(),
    credential_id: z.string().uuid().optional(),
    timeout_ms: z.number().int().min(100).max(600_000).optional(),
  })
  .strict()
  .refine((body) => body.action !== 'tools/call' || body.tool_name !== undefined, { path: ['tool_name'], message: 'tool_name is required for tools/call' });
export type TestCallInput = z.output<typeof testCallSchema>;

export const responsePreviewSchema = z
  .object({
    mcp_server_id: z.string().uuid(),
    tool_name: z.string().trim().min(1).max(200),
    arguments: jsonObject.default({}),
  })
  .strict();
export type ResponsePreviewInput = z.output<typeof responsePreviewSchema>;

/** An MCP server as the API shows it (`presentServer`): secrets in connection_config are masked. */
export const serverViewSchema = z
  .object({
    mcp_server_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    transport_type: z.string(),
    connection_config: z.record(z.string(), z.unknown()),
    credential_schema: z.record(z.string(), z.unknown()).nullable(),
    credential_id: z.string().uuid().nullable(),
    status: z.enum(['active', 'inactive', 'error']),
    last_health_check_at: z.string().datetime().nullable(),
    last_health_message: z.string().nullable(),
    created_at: z.string().datetime(),
    updated_at: z.string().datetime(),
  })
  .meta({ id: 'McpServer' });
