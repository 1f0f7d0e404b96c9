import type { ValidationIssue } from '../errors.js';
import type { JsonSchema } from './models.js';

/** A tool server as a backend sees it, with its decrypted secret. @public */
export interface ToolServerConnection {
  server_id: string;
  transport_type: string;
  connection_config: Readonly<Record<string, unknown>>;
  /** Decrypted credential values, for substitution into headers or env. */
  secret: Readonly<Record<string, string>> | null;
}

/** A tool a server offers. @public */
export interface ToolDescriptor {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/** Per-call limits. @public */
export interface ToolCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What a tool or skill call produced (audit statuses of spec 2.7). @public */
export interface ToolCallOutcome {
  status: 'success' | 'error' | 'timeout';
  /** The result as the tool returned it (JSON). */
  result: unknown;
  error?: string;
}

/** Tools the agent may call, with policy, allowlist, limits and audit enforced by core. @public */
export interface ToolHandle {
  list(): Promise<ToolDescriptor[]>;
  call(name: string, args: Record<string, unknown>): Promise<ToolCallOutcome>;
}

/**
 * A tool transport (MCP over `stdio`, `http_sse`), registered by transport.
 * @public
 */
export interface ToolBackend {
  /**
   * Servers of this backend start programs on the host (like MCP's `stdio`): only super admins define or change them
   * unless `[mcp] sub_admins_manage_stdio_servers` is on. Since SDK 1.3.0.
   */
  readonly launchesProcesses?: boolean;
  /** Checks `connection_config` before it is stored. */
  validateConfig(config: Readonly<Record<string, unknown>>): ValidationIssue[];
  healthCheck(server: ToolServerConnection, options: ToolCallOptions): Promise<{ ok: boolean; message?: string }>;
  listTools(server: ToolServerConnection, options: ToolCallOptions): Promise<ToolDescriptor[]>;
  /**
   * `tools/list` for an administrator's test call: the descriptors and the server's own answer (`raw`, as it came
   * over the wire; a backend that pages merges the pages). Optional: without it the test call shows no raw answer.
   */
  listToolsRaw?(server: ToolServerConnection, options: ToolCallOptions): Promise<{ tools: ToolDescriptor[]; raw: unknown }>;
  callTool(server: ToolServerConnection, name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolCallOutcome>;
  /** Closes pooled connections and child processes. */
  close(): Promise<void>;
}

/**
 * Native tools a plugin offers without a transport: each has a JSON Schema input, and core calls it through the same
 * tool pipeline as MCP tools (mounts and allowlists, gates, per-turn limits, approvals, audits). Core lists every
 * enabled provider as a tool server of transport `tool_provider`, which administrators mount on agents; nobody creates
 * it by hand. Core enforces `timeoutMs` and turns a throw into an `error` outcome, so a provider may simply throw.
 * Since SDK 1.9.0.
 * @beta
 */
export interface ToolProvider {
  /** The name of the tool server core lists for this provider. */
  readonly displayName: string;
  /** The description of that tool server. */
  readonly description?: string;
  /** The tools, each with an object input schema; core lists them for mounts and turns. */
  listTools(options: ToolCallOptions): Promise<ToolDescriptor[]>;
  /** Runs one tool with arguments the pipeline checked against the mount's policy; an unknown name is not a `success`. */
  callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolCallOutcome>;
}

/** A skill invocation. @public */
export interface SkillInvocation {
  skill_version_id: string;
  backend_ref_id: string | null;
  /** The version's `config`, as {@link SkillBackend.validateConfig} accepted it. */
  config: Readonly<Record<string, unknown>>;
  input: Record<string, unknown>;
  /**
   * The tools of the server `backend_ref_id` names (for `mcp`: an MCP server), reached through core: the
   * credential stays in core, the mount's `tool_allowlist` applies, and calls share the invocation's timeout.
   * Absent when the backend type names no tool server.
   */
  tools?: ToolHandle;
}

/**
 * Runs skills of one backend type (for example `mcp`, `http`).
 * @public
 */
export interface SkillBackend {
  /** Checks a skill version's `config` before it is stored; issue locations start at `config`. */
  validateConfig(config: Readonly<Record<string, unknown>>): ValidationIssue[];
  invoke(invocation: SkillInvocation, options: ToolCallOptions): Promise<ToolCallOutcome>;
}
