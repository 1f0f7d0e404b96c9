/**
 * Every permission an administrator can hold. `super_admin` holds all of
 * them without grant rows; `sub_admin` holds its active grants.
 */
export const PERMISSION_CATALOG = [
  { code: 'dashboard.read', description: 'Read dashboards and release metadata' },
  { code: 'admin_users.read', description: 'List and read administrator users' },
  { code: 'admin_users.write', description: 'Create, update and delete administrator users' },
  { code: 'admin_permissions.write', description: 'Grant and revoke administrator permissions' },
  { code: 'audit_logs.read', description: 'Read the audit log' },
  { code: 'system_settings.read', description: 'Read system settings' },
  { code: 'system_settings.write', description: 'Change system settings' },
  { code: 'conversations.read', description: 'Read sessions, messages and turns' },
  { code: 'conversations.write', description: 'Take over sessions, reply by hand, chat with admin-only agents' },
  { code: 'knowledge.read', description: 'Read knowledge sources, documents and ingestion' },
  { code: 'knowledge.write', description: 'Change knowledge sources, documents and corrections' },
  { code: 'mcp.read', description: 'Read MCP servers, credentials and mounts' },
  { code: 'mcp.write', description: 'Change MCP servers, credentials and mounts' },
  { code: 'skills.read', description: 'Read skills and their versions' },
  { code: 'skills.write', description: 'Change, release and mount skills' },
  { code: 'agents.read', description: 'Read agents and their versions' },
  { code: 'agents.write', description: 'Create, change, snapshot, publish and roll back agents' },
  { code: 'agents.delete', description: 'Delete agents' },
  { code: 'scheduled_tasks.read', description: 'Read scheduled tasks and runs' },
  { code: 'scheduled_tasks.write', description: 'Cancel scheduled tasks' },
  { code: 'evaluation.read', description: 'Read evaluation datasets and runs' },
  { code: 'evaluation.write', description: 'Change datasets and start evaluation runs' },
  { code: 'jobs.read', description: 'Read ETL and file jobs' },
  { code: 'jobs.write', description: 'Start and cancel ETL and file jobs' },
  { code: 'document_recognition.write', description: 'Review document-recognition fields' },
] as const;

export type PermissionCode = (typeof PERMISSION_CATALOG)[number]['code'];

const CODES = new Set<string>(PERMISSION_CATALOG.map((p) => p.code));

export function isPermissionCode(code: string): code is PermissionCode {
  return CODES.has(code);
}

export type RoleCode = 'super_admin' | 'sub_admin';
