import { createHash } from 'node:crypto';
import {
  BadRequestError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
  z,
  type JsonSchema,
  type HttpClient,
  type Logger,
  type ToolBackend,
  type ToolCallOptions,
  type ToolCallOutcome,
  type ToolDescriptor,
  type ToolServerConnection,
  type ValidationIssue,
} from '@agent-host/sdk';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InvalidConnectionConfig, parseConnectionConfig, requireConnectionConfig, type TransportType } from './connection-config.js';
import { Deadline } from './deadline.js';
import { openConnection, withDiagnosis, type McpConnection, type McpTarget } from './mcp-connection.js';
import { MissingSecretError, redactSecrets, substituteSecrets, type Secret } from './placeholders.js';
import { ConnectionPool } from './pool.js';
import type { StdioPolicy } from './stdio-policy.js';
import { callUrlTool, probeUrlTool, urlToolDescriptor, type UrlTool } from './url-tool.js';

export interface McpToolBackendOptions {
  transport: TransportType;
  /** How long an unused connection (and its stdio child) stays open for reuse. */
  idleTimeoutMs: number;
  /** Used when a caller passes no usable `timeoutMs`. */
  defaultTimeoutMs: number;
  /** Connections kept open at once. */
  maxConnections: number;
  /** stdio: how long a server may take to exit after stdin closes, and again after SIGTERM. */
  shutdownGraceMs: number;
  /** stdio: the largest message a server may send; past it the call fails and the server is ended. */
  maxMessageBytes: number;
  /** stdio: which commands may run, checked when a server is saved and at every launch. */
  stdioPolicy: StdioPolicy;
  /** stdio: the children's (empty) working directory. */
  stdioCwd: string;
  /** http_sse: the host's HTTP client; server and tool URLs come from the API, so they go through its guard. */
  http: HttpClient;
  log: Logger;
}

type Resolved = { kind: 'mcp'; target: McpTarget } | { kind: 'url'; tool: UrlTool };

/**
 * A `ToolBackend` for one transport: `stdio`, or `http_sse` (MCP over
 * Streamable HTTP or SSE, or one plain URL with `import_mode=url`). The
 * spec's wire actions map to MCP as: `health/check` -> `initialize` (on a new
 * connection) and `ping`; `tools/list` -> `tools/list`, every page;
 * `tools/call` -> `tools/call`, bounded by `timeout_ms`.
 */
export class McpToolBackend implements ToolBackend {
  private readonly pool: ConnectionPool<McpConnection>;

  constructor(private readonly options: McpToolBackendOptions) {
    this.pool = new ConnectionPool({ idleTimeoutMs: options.idleTimeoutMs, maxConnections: options.maxConnections });
  }

  /** Untimed here: calls and MCP streams run under the backend's own deadlines. */
  private readonly guardedFetch = (url: string | URL, init?: RequestInit) => this.options.http.fetchUntrusted(url, { ...init, timeoutMs: Infinity });

  get launchesProcesses(): boolean {
    return this.options.transport === 'stdio';
  }

  get transport(): TransportType {
    return this.options.transport;
  }

  validateConfig(config: Readonly<Record<string, unknown>>): ValidationIssue[] {
    if (this.options.transport !== 'stdio') {
      const parsed = parseConnectionConfig('http_sse', config);
      return parsed.ok ? [] : parsed.issues;
    }
    const parsed = parseConnectionConfig('stdio', config);
    return parsed.ok ? this.options.stdioPolicy.check(parsed.config) : parsed.issues;
  }

  async healthCheck(server: ToolServerConnection, options: ToolCallOptions): Promise<{ ok: boolean; message?: string }> {
    const deadline = this.deadline(options);
    try {
      const resolved = this.resolve(server);
      if (resolved.kind === 'url') return await deadline.race(probeUrlTool(resolved.tool, deadline.signal, this.guardedFetch));
      return await this.withConnection(server, resolved.target, deadline, async (connection) => {
        await connection.client.ping(deadline.requestOptions());
        const info = connection.client.getServerVersion();
        return { ok: true, message: `${info?.name ?? 'server'} ${info?.version ?? ''} answered over ${connection.wire}` };
      });
    } catch (error) {
      return { ok: false, message: this.explain(error, server, deadline, 'health/check') };
    }
  }

  async listTools(server: ToolServerConnection, options: ToolCallOptions): Promise<ToolDescriptor[]> {
    return (await this.listToolsRaw(server, options)).tools;
  }

  /**
   * `tools/list`, every page, read as the server sent it: the descriptors for
   * core, and `raw`, the server's result with the pages' `tools` concatenated
   * (other fields from the first page, `nextCursor` dropped). A plain URL tool
   * sends no request, so its `raw` is null.
   */
  async listToolsRaw(server: ToolServerConnection, options: ToolCallOptions): Promise<{ tools: ToolDescriptor[]; raw: unknown }> {
    const deadline = this.deadline(options);
    try {
      const resolved = this.resolve(server);
      if (resolved.kind === 'url') return { tools: [urlToolDescriptor(resolved.tool)], raw: null };
      return await this.withConnection(server, resolved.target, deadline, async ({ client }) => {
        const listed: unknown[] = [];
        let first: Record<string, unknown> | undefined;
        let cursor: string | undefined;
        do {
          const page = await client.request(
            { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
            RAW_TOOLS_PAGE,
            deadline.requestOptions(),
          );
          first ??= page;
          listed.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
        const { nextCursor: _cursor, ...rest } = first!;
        return { tools: listed.map(descriptorOf), raw: { ...rest, tools: listed } };
      });
    } catch (error) {
      if (error instanceof InvalidConnectionConfig) throw new ValidationError(error.issues);
      const message = this.explain(error, server, deadline, 'tools/list');
      if (error instanceof MissingSecretError) throw new BadRequestError(message, { code: 'SECRET_MISSING' });
      throw deadline.timedOut(error) ? new UpstreamTimeoutError(message) : new UpstreamError(message);
    }
  }

  async callTool(server: ToolServerConnection, name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolCallOutcome> {
    const deadline = this.deadline(options);
    try {
      const resolved = this.resolve(server);
      if (resolved.kind === 'url') {
        if (name !== resolved.tool.toolName) {
          return { status: 'error', result: null, error: `unknown tool "${name}"; this server offers only "${resolved.tool.toolName}"` };
        }
        const response = await deadline.race(callUrlTool(resolved.tool, args, deadline.signal, this.guardedFetch));
        return response.ok ? { status: 'success', result: response.body } : { status: 'error', result: response.body, error: `HTTP ${response.status}` };
      }
      const result = await this.withConnection(server, resolved.target, deadline, ({ client }) =>
        client.callTool({ name, arguments: args }, undefined, deadline.requestOptions()),
      );
      return outcomeOf(result as CallToolResult, server.secret);
    } catch (error) {
      return { status: deadline.timedOut(error) ? 'timeout' : 'error', result: null, error: this.explain(error, server, deadline, `tools/call ${name}`) };
    }
  }

  /** Closes every pooled connection and waits for stdio children to exit. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private deadline(options: ToolCallOptions | undefined): Deadline {
    const timeoutMs = options && Number.isFinite(options.timeoutMs) && options.timeoutMs > 0 ? options.timeoutMs : this.options.defaultTimeoutMs;
    return new Deadline(timeoutMs, options?.signal);
  }

  private resolve(server: ToolServerConnection): Resolved {
    if (this.options.transport === 'stdio') {
      const config = requireConnectionConfig('stdio', server.connection_config);
      // Checked again at launch: the policy may have narrowed since the server was saved.
      const refused = this.options.stdioPolicy.check(config);
      if (refused.length) throw new InvalidConnectionConfig(refused);
      const env = substituteSecrets(config.env, server.secret, 'env');
      const log = this.options.log.child({ server_id: server.server_id });
      const launch = {
        command: this.options.stdioPolicy.executableFor(config.command),
        args: config.args,
        env,
        cwd: this.options.stdioCwd,
        shutdownGraceMs: this.options.shutdownGraceMs,
        maxMessageBytes: this.options.maxMessageBytes,
        onExit: (status: string, stderr: string) => {
          if (stderr) log.warn({ status, stderr: redactSecrets(stderr, server.secret) }, 'stdio tool server exited; its stderr (never shown to callers)');
        },
      };
      return { kind: 'mcp', target: { kind: 'stdio', launch } };
    }
    const config = requireConnectionConfig('http_sse', server.connection_config);
    const headers = substituteSecrets(config.headers, server.secret, 'headers');
    if (config.import_mode === 'url') return { kind: 'url', tool: { url: config.url, method: config.http_method, toolName: config.tool_name, headers } };
    return { kind: 'mcp', target: { kind: 'http', url: config.url, headers, transport: config.http_transport } };
  }

  /**
   * Runs `work` on the pooled connection for this server and resolved config.
   * The key hashes the config with its substituted secrets, so a rotated
   * credential gets a new connection and no secret sits in the key.
   */
  private withConnection<T>(server: ToolServerConnection, target: McpTarget, deadline: Deadline, work: (connection: McpConnection) => Promise<T>): Promise<T> {
    const key = `${server.server_id}:${createHash('sha256').update(JSON.stringify(target)).digest('hex')}`;
    return this.pool.use(
      key,
      (onDead) => this.open(server, target, deadline, onDead),
      async (connection, lease) => {
        try {
          return await work(connection);
        } catch (error) {
          if (unfitAfter(error, connection, deadline)) lease.retire();
          throw withDiagnosis(error, connection.diagnosis(), deadline);
        }
      },
      (ready) => deadline.race(ready),
    );
  }

  private async open(server: ToolServerConnection, target: McpTarget, deadline: Deadline, onDead: () => void): Promise<McpConnection> {
    const log = this.options.log.child({ server_id: server.server_id });
    const connection: McpConnection = await openConnection(
      target,
      deadline,
      () => {
        log.debug(
          { wire: connection.wire, pid: connection.pid, detail: redactSecrets(connection.diagnosis(), server.secret) },
          'tool server connection closed',
        );
        onDead();
      },
      this.guardedFetch,
    );
    log.debug({ wire: connection.wire, pid: connection.pid }, 'tool server connected');
    return connection;
  }

  /** The message for a failed action; it passes through secret redaction like everything that leaves. */
  private explain(error: unknown, server: ToolServerConnection, deadline: Deadline, action: string): string {
    let message: string;
    if (deadline.timedOut(error)) message = `${action} timed out after ${deadline.timeoutMs} ms`;
    else if (deadline.cancelled) message = `${action} was cancelled by the caller`;
    else message = `${action} failed: ${describe(error)}`;
    return redactSecrets(message, server.secret);
  }
}

/**
 * The error's message, led by the HTTP status when a transport got one (the
 * SDK leaves it out of the text), and with the reason `fetch` keeps in its
 * `cause` (refused, unknown host, bad port).
 */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = error instanceof StreamableHTTPError || error instanceof SseError ? error.code : undefined;
  const reason = error instanceof TypeError && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${status !== undefined && status > 0 ? `HTTP ${status}: ` : ''}${error.message}${reason}`;
}

/**
 * Whether a failed call leaves its connection unfit for the next one. On a
 * timeout the SDK has sent `notifications/cancelled`, which is all MCP asks
 * and keeps an HTTP session usable; a stdio child is ended all the same,
 * because a server that ignores the cancellation may stay wedged on its only
 * stream. A transport failure (a crashed child, an HTTP session the server
 * forgot) makes a connection unfit; a JSON-RPC error answer or the caller's
 * own cancellation does not.
 */
function unfitAfter(error: unknown, connection: McpConnection, deadline: Deadline): boolean {
  if (deadline.timedOut(error)) return connection.wire === 'stdio';
  if (deadline.cancelled) return false;
  return !(error instanceof McpError && error.code !== ErrorCode.ConnectionClosed);
}

/**
 * A `tools/list` page, checked no further than paging needs: the SDK's own
 * result schema would drop the fields it does not know (vendor extensions),
 * and the test call shows the answer as it came.
 */
const RAW_TOOLS_PAGE = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A listed tool as core sees it. A tool without a string name gets an empty one, which core leaves out. */
function descriptorOf(tool: unknown): ToolDescriptor {
  const fields = (tool && typeof tool === 'object' ? tool : {}) as Record<string, unknown>;
  const schema = fields.inputSchema;
  return {
    name: typeof fields.name === 'string' ? fields.name : '',
    description: typeof fields.description === 'string' ? fields.description : '',
    input_schema: schema && typeof schema === 'object' && !Array.isArray(schema) ? (schema as JsonSchema) : { type: 'object' },
  };
}

/**
 * `tools/call` result to outcome. `result` is the business payload: the
 * structured content when the server sends it, else the one text item parsed
 * as JSON, else the text, else the MCP content list as it came.
 */
function outcomeOf(result: CallToolResult, secret: Secret): ToolCallOutcome {
  const texts = result.content.flatMap((item) => (item.type === 'text' ? [item.text] : []));
  let payload: unknown = { content: result.content };
  if (result.structuredContent !== undefined) payload = result.structuredContent;
  else if (texts.length > 0 && texts.length === result.content.length) payload = texts.length === 1 ? parseJsonOr(texts[0]!) : texts.join('\n');
  if (!result.isError) return { status: 'success', result: payload };
  return { status: 'error', result: payload, error: redactSecrets(texts.join('\n') || 'the tool reported an error', secret) };
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
