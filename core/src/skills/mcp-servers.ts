import { NotFoundError } from '@agent-host/sdk';
import type { McpServers, ResolvedServer } from '../mcp/admin/servers.js';

/** The backend type whose `backend_ref_id` names an MCP server (spec 2.8, 3.3). */
export const MCP_BACKEND = 'mcp';

/** The status of a healthy MCP server (spec 2.7). */
const ACTIVE_SERVER = 'active';

/** Why a server with this status (`null`: none) cannot serve a skill, or `null` when it is active. */
export const inactiveReason = (serverId: string, status: string | null): string | null =>
  status === ACTIVE_SERVER ? null : `MCP server ${serverId} ${status === null ? 'does not exist' : `is ${status}, not active`}`;

/** What skills need of the MCP domain: a server's status and, to call its tools, the server resolved for its backend. */
export interface SkillMcpServers {
  /** The server's `status`, or `null` when no server has this id. */
  status(serverId: string): Promise<string | null>;
  /** The server's tool backend and connection (credential decrypted), and the secret values to mask. */
  resolve(serverId: string): Promise<Pick<ResolvedServer, 'backend' | 'connection' | 'secretValues'>>;
}

/** The MCP domain's servers, as skills see them. */
export function skillMcpServers(servers: McpServers): SkillMcpServers {
  return {
    status: (id) =>
      servers.find(id).then(
        (row) => row.status,
        (error: unknown) => {
          if (error instanceof NotFoundError) return null;
          throw error;
        },
      ),
    resolve: (id) => servers.resolve(id),
  };
}
