import { ValidationError } from '@agent-host/sdk';
import { randomToken, sha256 } from '../admin/secrets.js';

/**
 * The header an anonymous public caller sends the caller token its first job gave it (Fusion runs, ETL jobs): the
 * token is the only thing that ties an anonymous caller to what it made (docs/api-decisions.md).
 */
export const CALLER_TOKEN_HEADER = 'x-caller-token';
const CALLER_TOKEN = /^[A-Za-z0-9_-]{32,128}$/;

/** The caller token a request sent, if any; a malformed one is a 422 naming the header. */
export function sentCallerToken(headers: Record<string, string | string[] | undefined>): string | null {
  const value = headers[CALLER_TOKEN_HEADER];
  if (typeof value !== 'string' || value === '') return null;
  if (!CALLER_TOKEN.test(value))
    throw new ValidationError([{ loc: ['header', CALLER_TOKEN_HEADER], msg: 'is not a caller token this host issued', type: 'value_error' }]);
  return value;
}

/** The token a new anonymous job is made under: the one sent, or a new one (32 random bytes, base64url). */
export const callerTokenFor = (sent: string | null) => sent ?? randomToken(32);

/** What is stored to recognise a caller token: its SHA-256, never the token. */
export const callerHash = (token: string) => sha256(token);
