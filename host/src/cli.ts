#!/usr/bin/env node
import './quiet-warnings.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { AgentHostApp, createSuperAdmin, DEFAULT_CONFIG_DIR, describeConfig, reencryptAll, type PluginInfo } from '@agent-host/core';
import { Command } from 'commander';
import { SDK_VERSION } from '@agent-host/sdk';
import { buildAsyncApiDocument } from './openapi/asyncapi-document.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import { PLUGIN_KINDS, scaffoldPlugin } from './plugin-scaffold.js';
import { encryptSecret } from './secrets-cli.js';
import { createServer } from './server.js';
import { startHost } from './start.js';

const HOST_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const program = new Command('agent-host').description('A plugin-based, extensible agent host');

/** One line on stderr and exit 1: start-up refusals are meant to be read by people. */
function fail(error: unknown): never {
  process.stderr.write(`agent-host: ${(error as Error).message ?? String(error)}\n`);
  process.exit(1);
}

program
  .command('start')
  .description('start the host (embedded Postgres and Chroma unless DATABASE_URL / CHROMA_URL are set)')
  .action(async () => {
    const host = await startHost().catch(fail);
    const { app } = host;
    process.stdout.write(
      [
        `agent-host is serving on ${host.url}`,
        `  console:   ${host.url}/console`,
        `  health:    ${host.url}/healthz`,
        `  data dir:  ${app.dataDir}${app.config.database.url ? '' : ' (embedded Postgres and Chroma live here)'}`,
        `  plugins:   ${
          app.kernel
            .plugins()
            .map((p) => p.id)
            .join(', ') || '(none)'
        }`,
        ...loginLines(app),
        ...app.configurationProblems.map((problem, i) => `${i ? ' '.repeat(13) : '  warning:   '}${problem}`),
        `  stop:      Ctrl+C (or SIGTERM)`,
        '',
      ].join('\n'),
    );
    let signalled = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (signalled) return;
      signalled = true;
      app.logger.info({ signal }, 'shutting down');
      host.stop().then(
        () => process.exit(0),
        (error) => {
          app.logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  });

program
  .command('migrate')
  .description("apply pending database migrations and exit (on a running host's data directory, its database)")
  .option('--dry-run', 'list the pending migrations and apply none')
  .action(async (options: { dryRun?: boolean }) => {
    const names = await AgentHostApp.create().migrateOnly({ dryRun: options.dryRun }).catch(fail);
    const verb = options.dryRun ? 'pending' : 'applied';
    process.stdout.write(names.length ? `${verb}: ${names.join(', ')}\n` : 'database is up to date\n');
    process.exit(0);
  });

program
  .command('version')
  .description('print the versions of agent-host, its SDK and Node.js')
  .action(() => {
    process.stdout.write(`agent-host ${HOST_VERSION} (sdk ${SDK_VERSION}, node ${process.versions.node})\n`);
    process.exit(0);
  });

/** How to log in; a generated first password is printed this once and never stored in clear. */
function loginLines(app: AgentHostApp): string[] {
  const created = app.bootstrapAdmin;
  if (!created) return ['  log in:    POST /admin/auth/login with your administrator username and password'];
  if (!created.generatedPassword) return [`  log in:    super admin "${created.username}" created from ADMIN_BOOTSTRAP_USERNAME / ADMIN_BOOTSTRAP_PASSWORD`];
  return [
    `  log in:    first super admin created: username "${created.username}", one-time password ${created.generatedPassword}`,
    '             it is shown only now; to choose your own, set ADMIN_BOOTSTRAP_PASSWORD before the first start',
  ];
}

function formatPlugin(plugin: PluginInfo): string {
  const registered = Object.entries(plugin.registered)
    .map(([point, keys]) => `${point}: ${keys.join(', ')}`)
    .join('; ');
  return [
    `${plugin.id} ${plugin.version} (${plugin.origin}, sdk ${plugin.sdk})`,
    `  package:    ${plugin.packageName}`,
    `  from:       ${plugin.location}`,
    `  registered: ${registered || '(nothing)'}`,
  ].join('\n');
}

const plugins = program.command('plugins').alias('plugin').description('plugin commands');

plugins
  .command('new')
  .description('write a new plugin package (manifest, tsconfig, a working implementation, a conformance test, a README) into a new folder')
  .argument('<id>', 'the plugin id, kebab-case (also its config section [plugins.<id>])')
  .requiredOption('--kind <kind>', `what it contributes: ${Object.keys(PLUGIN_KINDS).join(', ')}`)
  .option('--dir <folder>', 'where to write it (default: ./<id>)')
  .option('--sdk <spec>', 'the @agent-host/sdk devDependency: a version range (default) or the path of a packed tarball (npm pack -w sdk)')
  .action(async (id: string, options: { kind: string; dir?: string; sdk?: string }) => {
    // `npm run agent-host -- ...` runs in the repository's root; paths are the caller's.
    const cwd = process.env.INIT_CWD ?? process.cwd();
    const directory = path.resolve(cwd, options.dir ?? id);
    const sdk = options.sdk && /[\\/]|\.tgz$/.test(options.sdk) ? `file:${path.resolve(cwd, options.sdk)}` : options.sdk;
    const files = await scaffoldPlugin({ id, kind: options.kind, directory, sdk }).catch(fail);
    process.stdout.write(
      [
        `wrote ${files.length} files to ${directory}:`,
        ...files.map((f) => `  ${f}`),
        '',
        'next:',
        `  cd ${directory}`,
        '  npm install && npm test',
        `  AGENT_HOST_PLUGINS_EXTRA=${directory} npm start   # from the host's checkout, once npm test (or npm run build) here has compiled dist/`,
        '',
      ].join('\n'),
    );
    process.exit(0);
  });

plugins
  .command('list')
  .description(
    'check the enabled plugins (manifest, SDK range, config) and print where each came from, its version and what it registers; starts no database or server',
  )
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) => {
    const plugins = await AgentHostApp.create().kernel.inspect().catch(fail);
    process.stdout.write(options.json ? JSON.stringify(plugins, null, 2) + '\n' : plugins.map(formatPlugin).join('\n') + '\n');
    process.exit(0);
  });

program
  .command('openapi')
  .description(
    'print the OpenAPI 3.1 document of the HTTP API (with --asyncapi, the AsyncAPI 3.0 document of the WebSocket interface), what GET /openapi.json serves; starts no database or server',
  )
  .option('--asyncapi', 'the WebSocket interface instead')
  .action((options: { asyncapi?: boolean }) => {
    let document: unknown;
    try {
      const openApi = buildOpenApiDocument(createServer(AgentHostApp.create()).routes);
      document = options.asyncapi ? buildAsyncApiDocument(openApi.info.version) : openApi;
    } catch (error) {
      fail(error);
    }
    // Exit once written: a pipe takes 64 KB at a time, and exiting earlier would cut the document short.
    process.stdout.write(JSON.stringify(document, null, 2) + '\n', () => process.exit(0));
  });

program
  .command('config')
  .description('configuration commands')
  .command('check')
  .description('validate the configuration and print every effective value with its source (file, environment or default), secrets masked; starts nothing')
  .option('--json', 'print JSON')
  .action((options: { json?: boolean }) => {
    let described: ReturnType<typeof describeConfig>;
    try {
      described = describeConfig({ configDir: DEFAULT_CONFIG_DIR, env: process.env });
    } catch (error) {
      fail(error);
    }
    const { entries, problems } = described;
    if (options.json) process.stdout.write(JSON.stringify({ entries, problems }, null, 2) + '\n');
    else {
      const width = Math.max(...entries.map((e) => e.key.length));
      for (const entry of entries) process.stdout.write(`${entry.key.padEnd(width)} = ${JSON.stringify(entry.value)}  (${entry.source})\n`);
      for (const problem of problems) process.stdout.write(`refused in production: ${problem}\n`);
      process.stdout.write(problems.length ? '' : 'configuration is valid\n');
    }
    process.exit(problems.length ? 1 : 0);
  });

/** A password typed on a terminal, not echoed; Ctrl+C cancels. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
    process.stderr.write(prompt);
    const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
    const finish = (line: string) => {
      resolve(line); // before close(), whose 'close' event would resolve ''
      rl.close();
      process.stderr.write('\n');
    };
    rl.once('line', finish);
    rl.once('close', () => resolve(''));
    rl.once('SIGINT', () => {
      rl.close();
      process.stderr.write('\n');
      reject(new Error('cancelled'));
    });
  });
}

/** The first line of piped stdin, or '' when it is empty. */
function firstLine(): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    rl.once('line', (line) => {
      resolve(line); // before close(), whose 'close' event would resolve ''
      rl.close();
    });
    rl.once('close', () => resolve(''));
  });
}

/** ADMIN_PASSWORD, else one line of stdin (hidden on a terminal); empty means generate one. */
async function newAdminPassword(): Promise<string> {
  if (process.env.ADMIN_PASSWORD) return process.env.ADMIN_PASSWORD;
  return process.stdin.isTTY ? promptHidden('password for the new super admin (empty to generate one): ') : firstLine();
}

program
  .command('admin')
  .description('administrator commands')
  .command('create-super-admin')
  .description('create a super admin; the password comes from ADMIN_PASSWORD, else one line of stdin, else it is generated and printed once')
  .requiredOption('--username <name>', 'login name of the new super admin')
  .action(async (options: { username: string }) => {
    const password = await newAdminPassword().catch(fail);
    const app = AgentHostApp.create();
    let created: Awaited<ReturnType<typeof createSuperAdmin>>;
    try {
      created = await createSuperAdmin(await app.startDatabaseOnly(), { username: options.username, ...(password && { password }) });
    } catch (error) {
      await app.stop();
      fail(error);
    }
    await app.stop();
    process.stdout.write(
      created.generatedPassword
        ? `created super admin "${created.username}"; one-time password ${created.generatedPassword}\n  it is shown only now and stored only as an argon2id hash\n`
        : `created super admin "${created.username}"\n`,
    );
    process.exit(0);
  });

const secrets = program.command('secrets').description('secrets commands');

secrets
  .command('encrypt')
  .description(
    "encrypt one line of stdin (hidden prompt on a terminal) with the host's secrets key and print the ciphertext, e.g. for a catalog entry's options.api_key_encrypted",
  )
  .action(async () => {
    const plaintext = await (process.stdin.isTTY ? promptHidden('secret to encrypt: ') : firstLine()).catch(fail);
    let ciphertext: string;
    try {
      ciphertext = encryptSecret(plaintext);
    } catch (error) {
      fail(error);
    }
    process.stdout.write(ciphertext + '\n');
    process.exit(0);
  });

secrets
  .command('reencrypt')
  .description(
    'rewrite every encrypted value in the database under the active key (AGENT_HOST_SECRETS_KEY), bound to its row; previous keys come from AGENT_HOST_SECRETS_PREVIOUS_KEYS',
  )
  .action(async () => {
    const app = AgentHostApp.create();
    let report: Awaited<ReturnType<typeof reencryptAll>>;
    try {
      report = await reencryptAll(await app.startDatabaseOnly(), app.secrets());
    } catch (error) {
      await app.stop();
      fail(error);
    }
    await app.stop();
    for (const { table, column, rewritten, current } of report)
      process.stdout.write(`${table}.${column}: ${rewritten} rewritten, ${current} already current\n`);
    process.exit(0);
  });

program.parseAsync(process.argv).catch(fail);
