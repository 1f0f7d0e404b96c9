import { safeValidate, z, type ValidationIssue } from '@agent-host/sdk';

/** Transports this plugin serves, as spec 2.7 names them in `transport_type`. */
export type TransportType = 'stdio' | 'http_sse';

/** RFC 9110 token: what `Headers` accepts as a name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Splits an `args` string into argv the way a POSIX shell would split words
 * (whitespace, single and double quotes, backslash escapes) without running a
 * shell, so nothing in it is expanded or executed. Null on an unclosed quote.
 */
export function splitArgs(input: string): string[] | null {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (c === '\\' && i + 1 < input.length && (quote === null || '"\\$`'.includes(input[i + 1]!))) {
      word += input[++i];
      inWord = true;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return null;
  if (inWord) words.push(word);
  return words;
}

const stdioConfig = z
  .object({
    command: z.string({ error: 'command is required for stdio' }).trim().min(1, 'command is required for stdio'),
    args: z
      .union([z.array(z.string()), z.string()], { error: 'args must be a string or an array of strings' })
      .transform((args, ctx) => {
        if (Array.isArray(args)) return args;
        const words = splitArgs(args);
        if (words === null) ctx.issues.push({ code: 'custom', message: 'args has an unclosed quote', input: args });
        return words ?? [];
      })
      .default([]),
    /** Extra environment of the child; values may hold `<SECRET_KEY>` placeholders. */
    env: z.record(z.string().regex(ENV_NAME, 'not an environment variable name'), z.string()).default({}),
  })
  .strict();

const httpConfig = z
  .object({
    url: z
      .string({ error: 'url is required' })
      .trim()
      .regex(/^https?:\/\//i, { error: 'url must start with http:// or https://', abort: true })
      .refine((u) => URL.canParse(u), 'url is not a valid URL'),
    /** Request headers; values may hold `<SECRET_KEY>` placeholders. */
    headers: z.record(z.string().regex(HEADER_NAME, 'not a valid header name'), z.string()).default({}),
    import_mode: z.enum(['mcp', 'url']).default('mcp'),
    /** `auto` tries Streamable HTTP and falls back to the older SSE transport. */
    http_transport: z.enum(['auto', 'streamable_http', 'sse']).default('auto'),
    http_method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(['GET', 'POST'], { error: 'http_method must be GET or POST' }))
      .default('GET'),
    tool_name: z.string().trim().min(1, 'tool_name must not be empty').default('imported_http_tool'),
  })
  .strict();

type Parsed<T extends TransportType> = z.output<T extends 'stdio' ? typeof stdioConfig : typeof httpConfig>;

/** Why a stored config cannot be used; carries the issues `validateConfig` reports. */
export class InvalidConnectionConfig extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(`invalid connection_config: ${issues.map((i) => `${i.loc.slice(1).join('.') || 'connection_config'}: ${i.msg}`).join('; ')}`);
  }
}

/**
 * Parses `connection_config` for a transport. A `null` value counts as unset,
 * because clients send null for optional fields they leave empty. Issue
 * locations start at `connection_config`; the caller prefixes where it came from.
 */
export function parseConnectionConfig<T extends TransportType>(
  transport: T,
  raw: Readonly<Record<string, unknown>>,
): { ok: true; config: Parsed<T> } | { ok: false; issues: ValidationIssue[] } {
  const input = Object.fromEntries(Object.entries(raw ?? {}).filter(([, v]) => v !== null));
  const parsed = safeValidate(transport === 'stdio' ? stdioConfig : httpConfig, input, ['connection_config']);
  return parsed.success ? { ok: true, config: parsed.data as Parsed<T> } : { ok: false, issues: parsed.issues };
}

/** {@link parseConnectionConfig}, throwing {@link InvalidConnectionConfig} on issues. */
export function requireConnectionConfig<T extends TransportType>(transport: T, raw: Readonly<Record<string, unknown>>): Parsed<T> {
  const parsed = parseConnectionConfig(transport, raw);
  if (!parsed.ok) throw new InvalidConnectionConfig(parsed.issues);
  return parsed.config;
}
