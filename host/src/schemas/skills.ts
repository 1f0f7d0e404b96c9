import { z } from 'zod';
import { timestamp } from '../validation.js';

/** Skills, their versions, mounts and calls as responses show them (spec 2.8, 4.12), from core/src/skills. */

export const skill = z
  .object({
    skill_id: z.string().uuid(),
    name: z.string().describe('The tool name runtimes show the model'),
    description: z.string(),
    status: z.enum(['active', 'disabled']),
    version_count: z.number().int(),
    latest_released_version_id: z.string().uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Skill' });

export const skillVersion = z
  .object({
    version_id: z.string().uuid(),
    skill_id: z.string().uuid(),
    version_number: z.number().int(),
    backend_type: z.string().describe('The skill backend plugin key: prompt, mcp, ...'),
    backend_ref_id: z.string().nullable().describe('For an mcp version, its MCP server'),
    config: z.record(z.string(), z.unknown()),
    is_released: z.boolean(),
    released_at: timestamp.nullable(),
    released_by: z.string().uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'SkillVersion' });

export const skillMount = z
  .object({
    mount_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    skill_id: z.string().uuid(),
    skill_name: z.string(),
    skill_version_id: z.string().uuid(),
    version_number: z.number().int(),
    backend_type: z.string(),
    is_active: z.boolean(),
    priority: z.number().int(),
    timeout_ms: z.number().int(),
    max_calls_per_turn: z.number().int(),
    tool_allowlist: z.array(z.string()),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'SkillMount' });

export const skillCall = z
  .object({
    skill_call_id: z.string().uuid(),
    session_id: z.string().nullable(),
    turn_id: z.string().uuid().nullable(),
    agent_id: z.string().uuid().nullable(),
    mount_id: z.string().uuid().nullable(),
    skill_id: z.string().uuid().nullable(),
    skill_version_id: z.string().uuid().nullable(),
    skill_name: z.string(),
    version_number: z.number().int().nullable(),
    backend_type: z.string().nullable(),
    backend_ref_id: z.string().nullable(),
    tool_name: z.string().nullable(),
    status: z.enum(['success', 'timeout', 'error', 'blocked']),
    trace_id: z.string().nullable(),
    request_payload: z.unknown().describe('Masked: sensitive values are ***'),
    response_payload: z.unknown(),
    error_message: z.string().nullable(),
    latency_ms: z.number().int().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'SkillCall' });
