/** Keys whose values are never stored in an audit: credentials, tokens, passwords, cookies. */
const SENSITIVE_KEY = /pass(word|wd|phrase)?$|secret|token|api[-_]?key|authori[sz]ation|cookie|credential|private[-_]?key|^auth$|signature|session[-_]?id/i;

export const MASK = '***';

/**
 * A copy of `value` with every known secret value cut out of its strings
 * (servers echo headers and environments back) and, with `keys`, the values
 * under sensitive keys replaced by `***`: what an audit may store.
 */
export function maskSensitive(value: unknown, secrets: readonly string[] = [], { keys = true } = {}): unknown {
  const known = secrets.filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return known.reduce((text, secret) => text.split(secret).join(MASK), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([key, inner]) => [key, keys && SENSITIVE_KEY.test(key) && inner !== null && inner !== undefined ? MASK : walk(inner)]),
      );
    }
    return v;
  };
  return walk(value);
}

/** `value` with the known secret values cut out, keys left alone: what a response may show. */
export const redactSecrets = <T>(value: T, secrets: readonly string[]): T => maskSensitive(value, secrets, { keys: false }) as T;

/** `text` with every known secret value replaced by `***`. */
export const redactText = (text: string, secrets: readonly string[]): string => maskSensitive(text, secrets) as string;
