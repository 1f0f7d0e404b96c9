import { pino, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from '@agent-host/sdk';
import { currentRequestId } from '../observability/request-scope.js';

/** `[logging] format`: `auto` is pretty on a terminal and JSON otherwise (files, pipes, log collectors). */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The root pino logger. JSON is written asynchronously so logging never blocks the token path; the pretty form is
 * for a person at a terminal. Secrets are redacted by key name either way.
 */
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
      ? pretty({ colorize: process.stdout.isTTY === true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss', singleLine: true, sync: false })
      : pino.destination({ sync: false }),
  );
}
