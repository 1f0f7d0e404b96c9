import { ConflictError, ValidationError, type SkillBackend, type ValidationIssue } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { inactiveReason, MCP_BACKEND, type SkillMcpServers } from './mcp-servers.js';

/** The backend fields of a skill version. */
export interface VersionBackend {
  backend_type: string;
  backend_ref_id: string | null;
  config: Readonly<Record<string, unknown>>;
}

/**
 * 422 unless a plugin registers the backend type and its backend accepts the
 * config; an `mcp` version must name its server in `backend_ref_id`.
 */
export function validateBackend(backends: KeyedRegistry<SkillBackend>, version: VersionBackend): void {
  const backend = backends.get(version.backend_type);
  if (!backend) {
    const known =
      backends
        .list()
        .map((entry) => `"${entry.key}"`)
        .join(', ') || 'none';
    throw new ValidationError([
      {
        loc: ['body', 'backend_type'],
        msg: `no enabled plugin provides skill backend "${version.backend_type}" (registered: ${known})`,
        type: 'unknown_backend',
      },
    ]);
  }
  const issues: ValidationIssue[] = backend.validateConfig(version.config).map((issue) => ({ ...issue, loc: ['body', ...issue.loc] }));
  if (version.backend_type === MCP_BACKEND && !version.backend_ref_id) {
    issues.push({ loc: ['body', 'backend_ref_id'], msg: 'an mcp skill version names its MCP server in backend_ref_id', type: 'missing' });
  }
  if (issues.length) throw new ValidationError(issues);
}

/** 409 unless an `mcp` version's server exists and is `active` (spec 3.3, 7); `action` is "released" or "mounted". */
export async function requireActiveServer(servers: SkillMcpServers, version: VersionBackend & { id: string }, action: string): Promise<void> {
  if (version.backend_type !== MCP_BACKEND) return;
  const reason = inactiveReason(version.backend_ref_id!, await servers.status(version.backend_ref_id!));
  if (reason) throw new ConflictError(`skill version ${version.id} cannot be ${action}: its ${reason}`, { code: 'SKILL_BACKEND_UNAVAILABLE' });
}
