import { realpathSync } from 'node:fs';
import { z, type ValidationIssue } from '@agent-host/sdk';
import which from 'which';

/**
 * Environment variables no stdio server may be given: they make a loader or interpreter run code of the caller's
 * choosing (`LD_PRELOAD`, `NODE_OPTIONS`, `BASH_ENV`) or redirect what the allowed command resolves to (`PATH`).
 */
const REFUSED_ENV = [/^LD_/, /^DYLD_/, /^NODE_OPTIONS$/, /^NODE_PATH$/, /^PYTHON/, /^PERL5/, /^RUBYOPT$/, /^BASH_ENV$/, /^ENV$/, /^PATH$/, /^HOME$/];

/** One `[mcp] stdio_allowed_commands` entry: a command name or path, or a table with its argument prefix and env. */
const entrySchema = z.union([
  z
    .string()
    .min(1)
    .transform((command) => ({ command, args_prefix: [] as string[], env: undefined as string[] | undefined })),
  z
    .object({
      command: z.string().min(1),
      /** Arguments every launch must start with, in order (the server's own script or package). */
      args_prefix: z.array(z.string()).default([]),
      /** Environment names a launch may set; absent: any name that is not refused. */
      env: z.array(z.string()).optional(),
    })
    .strict(),
]);

interface AllowedCommand {
  /** The configured command, as written. */
  command: string;
  /** Its executable, resolved through PATH and symlinks; `undefined` when it does not exist on this machine. */
  executable: string | undefined;
  argsPrefix: string[];
  env: string[] | undefined;
}

/** An executable on PATH (or a path), with symlinks resolved, so an alias cannot pass for another program. */
export function resolveExecutable(command: string): string | undefined {
  try {
    return realpathSync(which.sync(command));
  } catch {
    return undefined;
  }
}

/**
 * Which stdio servers this host may launch (`[mcp] stdio_allowed_commands`): the operator's list of executables,
 * each with fixed leading arguments and the environment names it may receive. Everything an API caller registers
 * is checked against it when the server is saved and again at every launch, so `mcp.write` alone cannot run code.
 */
export class StdioPolicy {
  private constructor(
    private readonly allowed: AllowedCommand[],
    /** Where the list came from, for messages: the config key, or the development default. */
    readonly source: string,
  ) {}

  /**
   * The configured list; without one, development and test hosts on loopback allow the host's own Node executable
   * and `npx` (and say so), and every other host allows nothing.
   */
  static from(configured: unknown, defaults: { appEnv: string; loopback: boolean }): StdioPolicy {
    if (configured === undefined) {
      const development = (defaults.appEnv === 'development' || defaults.appEnv === 'test') && defaults.loopback;
      return new StdioPolicy(
        development ? [process.execPath, 'npx'].map((command) => allowedCommand({ command, args_prefix: [], env: undefined })) : [],
        development ? 'the development default' : 'the default (nothing)',
      );
    }
    const entries = z.array(entrySchema).parse(configured);
    return new StdioPolicy(entries.map(allowedCommand), '[mcp] stdio_allowed_commands');
  }

  /** Whether the development default is in force (the plugin warns at start). */
  get isDevelopmentDefault(): boolean {
    return this.source === 'the development default';
  }

  /** The launch's problems, as validation issues under `connection_config`; none when the policy allows it. */
  check(launch: { command: string; args: readonly string[]; env: Readonly<Record<string, string>> }): ValidationIssue[] {
    const issues: ValidationIssue[] = [];
    const refuse = (field: string, msg: string) => issues.push({ loc: ['connection_config', field], msg, type: 'policy' });
    for (const name of Object.keys(launch.env)) {
      if (REFUSED_ENV.some((pattern) => pattern.test(name)))
        refuse('env', `${name} is never passed to a stdio server: it changes which code the loader or interpreter runs`);
    }
    const executable = resolveExecutable(launch.command);
    const candidates = this.allowed.filter((entry) => entry.executable !== undefined && entry.executable === executable);
    if (candidates.length === 0) {
      const names = this.allowed.map((entry) => entry.command).join(', ') || 'none';
      refuse(
        'command',
        `command "${launch.command}" is not allowed by ${this.source} of stdio commands (allowed: ${names}); an operator adds executables to [mcp] stdio_allowed_commands in the host configuration`,
      );
      return issues;
    }
    const entry = candidates.find((c) => c.argsPrefix.every((arg, i) => launch.args[i] === arg));
    if (!entry) {
      refuse(
        'args',
        `command "${launch.command}" is allowed only with the arguments it is configured with: ${candidates.map((c) => JSON.stringify(c.argsPrefix)).join(' or ')} first`,
      );
      return issues;
    }
    for (const name of Object.keys(launch.env)) {
      if (entry.env && !entry.env.includes(name))
        refuse('env', `${name} is not among the environment names [mcp] stdio_allowed_commands allows "${entry.command}" (${entry.env.join(', ') || 'none'})`);
    }
    return issues;
  }

  /** The executable to spawn: resolved here, so the child's PATH cannot swap it. */
  executableFor(command: string): string {
    return resolveExecutable(command) ?? command;
  }
}

function allowedCommand(entry: z.output<typeof entrySchema>): AllowedCommand {
  return { command: entry.command, executable: resolveExecutable(entry.command), argsPrefix: entry.args_prefix, env: entry.env };
}
