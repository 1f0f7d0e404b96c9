import { ConflictError, ValidationError, type ToolDescriptor } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import type { McpCallAudits } from '../pipeline/call-audit-store.js';
import { redactSecrets, redactText } from '../pipeline/masking.js';
import type { McpMounts } from './mounts.js';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { businessPayload, failurePayload, fieldCatalog } from '../pipeline/payloads.js';
import { allowedBy } from '../pipeline/policy.js';
import { MOUNT_DEFAULTS, type ResponsePreviewInput, type TestCallInput } from './schemas.js';
import type { McpServers } from './servers.js';
import { isTrackingTool, projectTrackingResult, TRACKING_ARGUMENT } from '../tracking/tracking.js';

/**
 * What an administrator runs against a server: the health check, the test
 * call, and the response preview of an agent's mount (spec 4.13). Every
 * message and payload that leaves has the credential's values cut out.
 */
export class McpServerActions {
  constructor(
    private readonly db: Sequelize,
    private readonly servers: McpServers,
    private readonly mounts: McpMounts,
    private readonly audits: McpCallAudits,
  ) {}

  /** `health/check`: the result also sets the server's status (`active` or `error`; `inactive` stays). */
  async healthCheck(id: string, op: Operation) {
    const server = await this.servers.resolve(id);
    const started = Date.now();
    const result = await server.backend.healthCheck(server.connection, { timeoutMs: MOUNT_DEFAULTS.timeout_ms });
    const message = redactText(result.message ?? (result.ok ? 'healthy' : 'unhealthy'), server.secretValues);
    const status = await this.db.transaction(async (transaction) => {
      const recorded = await this.servers.recordHealth(id, result.ok, message, transaction);
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        {
          action: 'mcp.server.health_check',
          outcome: result.ok ? 'success' : 'failure',
          target_type: 'mcp_server',
          target_id: id,
          payload: { ok: result.ok, status: recorded },
        },
        transaction,
      );
      return recorded;
    });
    return { mcp_server_id: id, ok: result.ok, status, message, latency_ms: Date.now() - started, checked_at: new Date().toISOString() };
  }

  /** `tools/list` (the tools, and the server's answer as it came when the backend gives it) or `tools/call`, optionally with another credential of a fitting scope. */
  async testCall(id: string, input: TestCallInput, op: Operation) {
    const server = await this.servers.resolve(id, input.credential_id);
    const options = { timeoutMs: input.timeout_ms ?? MOUNT_DEFAULTS.timeout_ms };
    const started = Date.now();
    let answer: { status: string; error_message: string | null; tools?: ToolDescriptor[]; raw_response?: unknown; result?: unknown };
    if (input.action === 'tools/list') {
      try {
        const listed = server.backend.listToolsRaw
          ? await server.backend.listToolsRaw(server.connection, options)
          : { tools: await server.backend.listTools(server.connection, options), raw: null };
        answer = {
          status: 'success',
          tools: listed.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })),
          raw_response: listed.raw,
          error_message: null,
        };
      } catch (error) {
        if (error instanceof ValidationError || (error as { status?: number }).status === 400) throw error;
        answer = {
          status: (error as { status?: number }).status === 504 ? 'timeout' : 'error',
          tools: [],
          raw_response: null,
          error_message: (error as Error).message,
        };
      }
    } else {
      const outcome = await server.backend.callTool(server.connection, input.tool_name!, input.arguments ?? {}, options);
      answer = { status: outcome.status, result: outcome.result, error_message: outcome.error ?? null };
    }
    await auditOperation(this.db, 'core.mcp', op, {
      action: 'mcp.server.test_call',
      outcome: answer.status === 'success' ? 'success' : 'failure',
      target_type: 'mcp_server',
      target_id: id,
      payload: { action: input.action, tool_name: input.tool_name ?? null, credential_id: input.credential_id ?? null, status: answer.status },
    });
    return redactSecrets({ mcp_server_id: id, action: input.action, ...answer, latency_ms: Date.now() - started }, server.secretValues);
  }

  /** Calls one tool through an agent's active mount, obeying its allowlist, and shows the raw and business payloads with their field catalog. */
  async responsePreview(agentId: string, input: ResponsePreviewInput, op: Operation) {
    await this.mounts.requireChatAgent(agentId);
    const mount = (await this.mounts.usable(agentId)).find((m) => m.mcp_server_id === input.mcp_server_id);
    if (!mount) throw new ConflictError(`MCP server ${input.mcp_server_id} is not mounted and active on agent ${agentId}`, { code: 'MCP_SERVER_NOT_MOUNTED' });
    if (!allowedBy(mount.allowed_tools_json, input.tool_name))
      throw new ConflictError(`tool "${input.tool_name}" is not in the mount's allowed_tools (${mount.allowed_tools_json.join(', ')})`, {
        code: 'TOOL_NOT_ALLOWED',
      });
    const server = await this.servers.resolveRow(mount.server);
    const started = Date.now();
    const outcome = await server.backend.callTool(server.connection, input.tool_name, input.arguments, { timeoutMs: mount.timeout_ms });
    const latency = Date.now() - started;
    const raw =
      outcome.status === 'success'
        ? isTrackingTool(input.tool_name)
          ? projectTrackingResult(outcome.result, input.tool_name, String(input.arguments[TRACKING_ARGUMENT] ?? ''))
          : outcome.result
        : failurePayload(mount.server_name, input.tool_name, outcome.error ?? outcome.status);
    await this.audits.record(
      {
        session_id: null,
        turn_id: null,
        agent_id: agentId,
        mount_id: mount.id,
        mcp_server_id: mount.mcp_server_id,
        server_name: mount.server_name,
        tool_name: input.tool_name,
        status: outcome.status,
        stage: 'mcp-call',
        origin: 'response_preview',
        reason: `response preview by ${op.operator.admin_user_id}`,
        trace_id: null,
        round: null,
        request_payload: input.arguments,
        response_payload: raw,
        error_message: outcome.error ?? null,
        latency_ms: latency,
      },
      server.secretValues,
    );
    const business = businessPayload(raw, input.tool_name);
    return redactSecrets(
      {
        status: outcome.status,
        latency_ms: latency,
        raw_response_payload: raw,
        business_response_payload: business,
        field_catalog: fieldCatalog(business),
        error_message: outcome.error ?? null,
      },
      server.secretValues,
    );
  }
}
