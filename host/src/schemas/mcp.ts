import { z } from 'zod';
import { timestamp } from '../validation.js';

/** MCP credentials, mounts, calls and test answers as responses show them (spec 2.7, 4.13), from core/src/mcp. */

export const credential = z
  .object({
    credential_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    scope: z.enum(['shared', 'server']),
    mcp_server_id: z.string().uuid().nullable(),
    secret_keys: z.array(z.string()).describe('The names of the secret fields; never their values'),
    allowed_destinations: z.array(z.string()),
    has_secret: z.literal(true),
    rotated_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'McpCredential' });

export const rotatedCredential = credential.extend({
  servers_to_reverify: z.array(z.object({ mcp_server_id: z.string().uuid(), server_name: z.string() })),
  mounts_to_reverify: z.array(z.object({ mount_id: z.string().uuid(), agent_id: z.string().uuid(), mcp_server_id: z.string().uuid() })),
});

export const mcpMount = z
  .object({
    mount_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    mcp_server_id: z.string().uuid(),
    server_name: z.string(),
    server_status: z.string(),
    allowed_tools: z.array(z.string()),
    tool_capability: z.string().nullable(),
    timeout_ms: z.number().int(),
    max_calls_per_turn: z.number().int(),
    priority: z.number().int(),
    is_active: z.boolean(),
    approval: z.enum(['none', 'operator']),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'McpMount' });

export const mcpCall = z
  .object({
    call_id: z.string().uuid(),
    session_id: z.string().nullable(),
    turn_id: z.string().uuid().nullable(),
    agent_id: z.string().uuid().nullable(),
    mount_id: z.string().uuid().nullable(),
    mcp_server_id: z.string().uuid().nullable(),
    server_name: z.string().nullable(),
    tool_name: z.string(),
    status: z.string().describe('success, error, timeout, blocked, skipped, ...'),
    stage: z.string().describe('The pipeline stage that decided (mcp-call, mcp-required-argument-check, ...)'),
    origin: z.string().describe('chat, quick_match, tool_handle, response_preview'),
    reason: z.string().nullable(),
    trace_id: z.string().nullable(),
    round: z.number().int().nullable(),
    request_payload: z.unknown().describe('Masked: sensitive values are ***'),
    response_payload: z.unknown(),
    error_message: z.string().nullable(),
    latency_ms: z.number().int().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'McpCall' });

export const healthCheck = z.object({
  mcp_server_id: z.string().uuid(),
  ok: z.boolean(),
  status: z.string().describe('The server status it left: active, error, or inactive'),
  message: z.string(),
  latency_ms: z.number().int(),
  checked_at: timestamp,
});

export const testCall = z.object({
  mcp_server_id: z.string().uuid(),
  action: z.enum(['tools/list', 'tools/call']),
  status: z.string().describe('success, error or timeout'),
  tools: z
    .array(z.object({ name: z.string(), description: z.string(), input_schema: z.record(z.string(), z.unknown()) }))
    .optional()
    .describe('tools/list'),
  raw_response: z.unknown().optional().describe("tools/list: the server's answer as it came, when the backend gives it"),
  result: z.unknown().optional().describe('tools/call: what the tool gave'),
  error_message: z.string().nullable(),
  latency_ms: z.number().int(),
});

export const responsePreview = z.object({
  status: z.string(),
  latency_ms: z.number().int(),
  raw_response_payload: z.unknown(),
  business_response_payload: z.unknown(),
  field_catalog: z
    .array(z.object({ path: z.string(), type: z.string(), example: z.unknown() }))
    .describe('Every field of the business payload, with its type and an example'),
  error_message: z.string().nullable(),
});
