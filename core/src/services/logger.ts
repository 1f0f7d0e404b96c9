import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger } from 'pino';
import type pinoPretty from 'pino-pretty';
import type { Logger } from '@agent-host/sdk';
import { currentRequestId } from '../observability/request-scope.js';

/** `[logging] format`: `auto` is pretty on a terminal and JSON otherwise (files, pipes, log collectors). */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The root pino logger. JSON is written asynchronously so logging never blocks the token path; the pretty form is
 * for a person at a terminal. Secrets are redacted by key name either way.
 */
// Required only for a terminal: servers and tests write JSON and never load it.
const loadPretty = () => createRequire(import.meta.url)('pino-pretty') as typeof pinoPretty;

export function createRootLogger(level: string, format: LogFormat = 'auto'): PinoLogger & Logger {
  const human = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  return pino(
    {
      level,
      base: { pid: process.pid },
      // Every line written while serving a request names it, whichever component writes it.
      mixin: () => {
        const reqId = currentRequestId();
        return reqId ? { req_id: reqId } : {};
      },
      redact: {
        paths: [
          'password',
          '*.password',
          'secret_payload',
          '*.secret_payload',
          'api_key',
          '*.api_key',
          'authorization',
          '*.authorization',
          'req.headers.cookie',
          'req.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    human
      ? loadPretty()({ colorize: process.stdout.isTTY === true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss', singleLine: true, sync: false })
      : pino.destination({ sync: false }),
  );
}
