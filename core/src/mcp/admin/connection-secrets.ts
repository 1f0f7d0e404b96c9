import { ConflictError, type ValidationIssue } from '@agent-host/sdk';

/** What `GET /mcp-servers` shows for a header or env value that is not made of placeholders. */
export const MASKED = '********';

const PLACEHOLDER = /<[A-Za-z_][A-Za-z0-9_.-]*>/;
const PLACEHOLDERS = new RegExp(PLACEHOLDER.source, 'g');
// Header and environment names that carry credentials.
const SECRET_NAME = /authorization|cookie|token|secret|passw|api[-_]?key|auth|credential|private/i;

/** A value that holds no secret itself: placeholders, with at most an auth scheme before them (`Bearer <TOKEN>`). */
export const isPlaceholderOnly = (value: string) =>
  PLACEHOLDER.test(value) &&
  value
    .replace(PLACEHOLDERS, '')
    .replace(/^\s*(bearer|basic|token)\s*/i, '')
    .trim() === '';

type Pairs = Record<string, string>;
const pairsOf = (config: Record<string, unknown>, field: 'headers' | 'env') =>
  config[field] && typeof config[field] === 'object' ? (config[field] as Pairs) : undefined;

/**
 * Credentials pasted into `connection_config`: a header or env variable named like a credential whose value is not
 * a placeholder. Such values would be stored in clear and shown to every `mcp.read` holder; they belong in an MCP
 * credential, which is encrypted and substituted only when the server is called.
 */
export function pastedCredentials(config: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const field of ['headers', 'env'] as const) {
    for (const [name, value] of Object.entries(pairsOf(config, field) ?? {})) {
      if (!SECRET_NAME.test(name) || typeof value !== 'string' || value === MASKED || isPlaceholderOnly(value)) continue;
      issues.push({
        loc: ['connection_config', field, name],
        msg: `${name} looks like a credential written in clear; put the value in an MCP credential (POST /mcp-credentials) and write a placeholder here, e.g. "Bearer <ACCESS_TOKEN>"`,
        type: 'value_error',
      });
    }
  }
  return issues;
}

/** `connection_config` as responses show it: header and env values that are not placeholders are masked. */
export function maskConnectionConfig(config: Record<string, unknown>): Record<string, unknown> {
  const masked = { ...config };
  for (const field of ['headers', 'env'] as const) {
    const pairs = pairsOf(config, field);
    if (pairs)
      masked[field] = Object.fromEntries(
        Object.entries(pairs).map(([name, value]) => [name, typeof value === 'string' && isPlaceholderOnly(value) ? value : MASKED]),
      );
  }
  return masked;
}

/** `next` with every masked value sent back (a console saving what it read) replaced by the stored one. */
export function unmask(next: Record<string, unknown>, stored: Record<string, unknown>): Record<string, unknown> {
  const out = { ...next };
  for (const field of ['headers', 'env'] as const) {
    const pairs = pairsOf(next, field);
    const old = pairsOf(stored, field) ?? {};
    if (pairs) out[field] = Object.fromEntries(Object.entries(pairs).map(([name, value]) => [name, value === MASKED && name in old ? old[name]! : value]));
  }
  return out;
}

/** What a credential's `allowed_destinations` name: a URL's origin, or a stdio server's command. */
export function credentialDestination(config: Record<string, unknown>): string | null {
  if (typeof config.url === 'string') return URL.canParse(config.url) ? new URL(config.url).origin : config.url;
  return typeof config.command === 'string' ? config.command : null;
}

/** Where a server's requests go: its URL, or the program and arguments it runs. */
const destinationOf = (config: Record<string, unknown>) => JSON.stringify([config.url ?? null, config.command ?? null, config.args ?? null]);

/**
 * A server holding a credential sends it wherever its `connection_config` points, so repointing one needs the
 * credential confirmed in the same request (`credential_id` repeated, or `confirm_credential: true`).
 */
export function refuseUnconfirmedRepoint(input: {
  name: string;
  credentialId: string | null;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  confirmed: boolean;
}): void {
  if (!input.credentialId || input.confirmed || destinationOf(input.before) === destinationOf(input.after)) return;
  throw new ConflictError(
    `MCP server "${input.name}" holds credential ${input.credentialId}, which would be sent to the new destination; repeat the change with "confirm_credential": true (or the credential_id) to confirm it may go there`,
    { code: 'CREDENTIAL_CONFIRMATION_REQUIRED' },
  );
}
