// What one turn's tool path is made of, and what the pipeline stages and the quick match read and change of it
// (`ToolTurn`, implemented by `TurnTools`): they take this interface, so the turn's tool path can run them without
// their modules importing it back.
import type { ChatMessage, MessageType, ModelRouter, ToolCallOutcome, Trace } from '@agent-host/sdk';
import type { ToolCallBudget } from '../../chat/tool-budget.js';
import type { HostConfig } from '../../config/schema.js';
import type { McpResponseConfig } from '../admin/agent-config.js';
import type { ToolApprovals } from './approvals.js';
import type { McpCallAudits, McpCallRecord } from './call-audit-store.js';
import type { baseObservation } from './response-rules.js';
import type { DiscoveryDeps, MountedTool, Toolset } from './toolset.js';

/** The agent fields the tool path reads. */
export interface ToolAgent {
  agent_id: string;
  mcp_response_config: unknown;
  mcp_runtime_config: unknown;
}

export interface TurnToolsInput {
  /** A chat agent, or null (no agent: no tools). */
  agent: ToolAgent | null;
  sessionId: string;
  turnId: string;
  traceId: string;
  /** The user's message as sent (no `[message_type=...]` prefix). */
  message: string;
  messageType: MessageType;
  history: readonly ChatMessage[];
  models: ModelRouter;
  trace: Trace;
  /** `max_tool_calls_total_per_request`, shared with the turn's skills. */
  budget: Pick<ToolCallBudget, 'take' | 'limit'>;
  signal: AbortSignal;
}

export interface TurnToolsDeps extends DiscoveryDeps {
  audits: McpCallAudits;
  config: HostConfig['mcp'];
  approvals: ToolApprovals;
}

/** What one execution produced. `blocked`: a limit stopped it before the call; `pending_approval`: an operator decides. */
export type Execution =
  | { status: 'blocked'; reason: string }
  | { status: 'pending_approval'; approval_id: string }
  | { status: ToolCallOutcome['status']; raw: unknown; business: unknown; error: string | null; latency_ms: number };

/** What the pipeline stages and the quick match use of a turn's tool path. */
export interface ToolTurn {
  readonly deps: TurnToolsDeps;
  readonly input: TurnToolsInput;
  /** `mcp_context`: one entry per stage. */
  readonly context: Record<string, unknown>[];
  readonly observation: ReturnType<typeof baseObservation>;
  readonly responseConfig: McpResponseConfig;
  /** Recent user messages in the window, oldest first. */
  readonly userHistory: string[];
  /** `mcp_runtime_config` prompt guidance. */
  readonly guidance: { selection: string | undefined; arguments: string | undefined };
  round: number;
  toolset(): Promise<Toolset>;
  execute(tool: MountedTool, args: Record<string, unknown>, origin: string): Promise<Execution>;
  audit(entry: Pick<McpCallRecord, 'tool_name' | 'status' | 'stage' | 'reason'> & Partial<McpCallRecord>, tool?: MountedTool): Promise<void>;
}
