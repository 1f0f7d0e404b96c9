import os from 'node:os';
import path from 'node:path';

/** The shared cache outside the clone (`AGENT_HOST_CACHE_DIR`, else `~/.cache/agent-host`) for installs and builds. */
export function cacheDir(configured: string): string {
  if (configured) return path.resolve(configured);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'agent-host');
}
