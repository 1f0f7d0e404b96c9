import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

export interface AgentHostClientOptions {
  /** An administrator API token (POST /admin/api-tokens), sent as `Authorization: Bearer`. */
  token?: string;
  /** Other headers for every request, for example a `cookie` or an `x-request-id`. */
  headers?: Record<string, string>;
}

/**
 * A client of the agent-host HTTP API whose paths, parameters, bodies and answers are the types of the host's
 * /openapi.json, generated when the host is built: a route that changes shape changes these types with it.
 */
export function createAgentHostClient(baseUrl: string, options: AgentHostClientOptions = {}): Client<paths> {
  return createClient<paths>({
    baseUrl,
    headers: { ...options.headers, ...(options.token && { authorization: `Bearer ${options.token}` }) },
  });
}
