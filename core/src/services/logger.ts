import { pino, type Logger as PinoLogger } from 'pino';
import type { Logger } from '@agent-host/sdk';

/**
 * The root pino logger. Writes asynchronously so logging never blocks the
 * token path; secrets are redacted by key name.
 */
export function createRootLogger(level: string): PinoLogger & Logger {
  return pino({
    level,
    base: { pid: process.pid },
    redact: {
      paths: ['password', '*.password', 'secret_payload', '*.secret_payload', 'api_key', '*.api_key', 'authorization', '*.authorization', 'req.headers.cookie', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  }, pino.destination({ sync: false }));
}
