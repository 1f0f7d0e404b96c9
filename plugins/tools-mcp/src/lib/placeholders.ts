/** Decrypted credential values of a tool server (`ToolServerConnection.secret`). */
export type Secret = Readonly<Record<string, string>> | null;

const PLACEHOLDER = /<([A-Za-z_][A-Za-z0-9_.-]*)>/g;

/** A placeholder names a value the server's credential does not hold. */
export class MissingSecretError extends Error {}

function lookup(secret: Secret, name: string): string | undefined {
  if (!secret) return undefined;
  if (Object.hasOwn(secret, name)) return secret[name];
  // Credentials are typed in by people: `<ACCESS_TOKEN>` should find `access_token`.
  const matches = Object.keys(secret).filter((key) => key.toLowerCase() === name.toLowerCase());
  return matches.length === 1 ? secret[matches[0]!] : undefined;
}

/**
 * Replaces every `<NAME>` in the values of `templates` with `secret[NAME]`.
 * `where` names the map in the error (`headers`, `env`); the error never holds
 * a secret value, only the placeholder's name.
 */
export function substituteSecrets(templates: Readonly<Record<string, string>>, secret: Secret, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, template] of Object.entries(templates)) {
    out[key] = template.replace(PLACEHOLDER, (_whole, name: string) => {
      const value = lookup(secret, name);
      if (value === undefined) {
        throw new MissingSecretError(
          `${where}.${key} references <${name}>, but ${secret ? 'the credential holds no such value' : 'the server has no credential'}`,
        );
      }
      return value;
    });
  }
  return out;
}

/**
 * Masks every credential value in `text`. Error messages from servers and
 * transports may echo request headers back; nothing leaves this plugin
 * (outcome, exception, log line) without passing through here.
 */
export function redactSecrets(text: string, secret: Secret): string {
  if (!secret) return text;
  const values = Object.values(secret)
    .filter((v) => typeof v === 'string' && v.length > 0)
    .sort((a, b) => b.length - a.length);
  return values.reduce((acc, value) => acc.split(value).join('***'), text);
}
