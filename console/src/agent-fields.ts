import type { Agent } from './api';
import { parseJson } from './components/json-field';

/** How one agent field is edited: its form control, and for selects the values it takes. */
export type FieldKind = 'text' | 'textarea' | 'select' | 'checkbox' | 'number' | 'json';

export interface AgentField {
  key: keyof Agent & string;
  label: string;
  kind: FieldKind;
  options?: readonly string[];
  /** Empty means null (the host's "not set"), not an empty string. */
  nullable?: boolean;
}

const json = (key: AgentField['key'], label: string): AgentField => ({ key, label, kind: 'json', nullable: true });
const limit = (key: AgentField['key'], label: string): AgentField => ({ key, label, kind: 'number', nullable: true });

/** The agent's editable fields in the groups of the interface specification (2.4). */
export const FIELD_GROUPS: { title: string; fields: AgentField[] }[] = [
  {
    title: 'Basics',
    fields: [
      { key: 'name', label: 'Name', kind: 'text' },
      { key: 'description', label: 'Description', kind: 'textarea' },
      { key: 'status', label: 'Status', kind: 'select', options: ['active', 'inactive'] },
      { key: 'agent_type', label: 'Type', kind: 'select', options: ['chat', 'etl', 'document_extraction', 'fusion'] },
      { key: 'orchestrator_key', label: 'Chat runtime (orchestrator key)', kind: 'text', nullable: true },
      { key: 'public_access_mode', label: 'Access', kind: 'select', options: ['admin_only', 'public_anonymous', 'public_api_key'] },
      { key: 'human_takeover_enabled', label: 'Operators may take sessions over', kind: 'checkbox' },
      { key: 'hide_rag_source_filename', label: 'Hide source file names from the model', kind: 'checkbox' },
      { key: 'multitask_strategy', label: 'A message while a turn runs', kind: 'select', options: ['enqueue', 'reject'] },
    ],
  },
  {
    title: 'Prompts',
    fields: [
      { key: 'system_prompt', label: 'System prompt', kind: 'textarea', nullable: true },
      { key: 'judge_prompt', label: 'Judge prompt (evaluation)', kind: 'textarea', nullable: true },
    ],
  },
  {
    title: 'Model',
    fields: [
      { key: 'model_provider', label: 'Provider', kind: 'text', nullable: true },
      { key: 'model_name', label: 'Model', kind: 'text', nullable: true },
      { key: 'model_temperature', label: 'Temperature', kind: 'number', nullable: true },
      json('model_routing_config', 'Routing (JSON)'),
    ],
  },
  {
    title: 'Responses',
    fields: [
      json('message_type_response_config', 'Fixed responses by message type (JSON)'),
      json('response_grounding_config', 'Grounding (JSON)'),
      json('mcp_response_config', 'Tool responses (JSON)'),
    ],
  },
  { title: 'Knowledge and tools', fields: [json('retrieval_config', 'Retrieval (JSON)'), json('mcp_runtime_config', 'Tool runtime (JSON)')] },
  { title: 'Fusion', fields: [json('fusion_definition', 'Fusion definition (JSON)')] },
  {
    title: 'Limits',
    fields: [
      limit('max_concurrent_requests', 'Concurrent requests'),
      limit('max_total_requests', 'Total requests'),
      limit('max_requests_per_day', 'Requests a day'),
      limit('max_total_tokens_daily', 'Tokens a day'),
      limit('max_total_tokens_monthly', 'Tokens a month'),
      limit('max_cost_usd_daily', 'Cost a day (USD)'),
      limit('max_cost_usd_monthly', 'Cost a month (USD)'),
      limit('max_tool_calls_total_per_request', 'Tool calls a request'),
    ],
  },
];

export const ALL_FIELDS = FIELD_GROUPS.flatMap((group) => group.fields);

/** What a form control shows for a stored value. */
export function toFormValue(field: AgentField, value: unknown): string | boolean {
  if (field.kind === 'checkbox') return Boolean(value);
  if (value === null || value === undefined) return '';
  if (field.kind === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

/** The stored value a form control means, or an error to show beside it (JSON that does not parse, a non-number). */
export function fromFormValue(field: AgentField, value: string | boolean): { value: unknown } | { error: string } {
  if (field.kind === 'checkbox') return { value: Boolean(value) };
  const text = String(value);
  if (text.trim() === '' && field.nullable) return { value: null };
  if (field.kind === 'number') return Number.isFinite(Number(text)) ? { value: Number(text) } : { error: 'not a number' };
  if (field.kind === 'json') return parseJson(text);
  return { value: text };
}
