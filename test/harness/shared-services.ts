// The services every test shares (one embedded Postgres server and one Chroma server per run, FerretDB for the MongoDB
// job store, Schemathesis for the API fuzz test, Chromium for the browser tests), started for a run of tap and stopped
// after it. Test files create their own database on the shared server, copied from one migrated once per run.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  cacheDir,
  createRootLogger,
  EmbeddedChroma,
  EmbeddedPostgresServer,
  ensureChromaVenv,
  ensureFerretDb,
  ensurePipTool,
  type EmbeddedServer,
} from '@agent-host/core';
import pg from 'pg';
import { openDatabase } from '../../core/src/db/database.js';
import { migrate } from '../../core/src/db/migrator.js';
import { MIGRATIONS_DIR } from '../../core/src/paths.js';
import { ensureChromium } from './chromium.js';

/** The OpenAPI fuzzer of test/integration/api-fuzz.test.ts (PyPI), pinned. */
const SCHEMATHESIS = {
  name: 'schemathesis-4.32.5',
  requirement: 'schemathesis==4.32.5',
  bin: 'st',
  missingPython: 'the API fuzz test installs Schemathesis with Python 3 and its venv module; install them',
};

/**
 * A database migrated once per run that test databases are copied from (`CREATE DATABASE ... TEMPLATE`): every host a
 * test starts finds its schema in place instead of running every migration again. Resolves with its name.
 */
async function migratedTemplate(adminUrl: string, logger: ReturnType<typeof createRootLogger>): Promise<string> {
  const name = 'agent_host_migrated';
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`).finally(() => client.end());
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sequelize = openDatabase(url.toString(), 1);
  try {
    await migrate(sequelize, MIGRATIONS_DIR, logger);
  } finally {
    // A template is copied only while nothing is connected to it.
    await sequelize.close();
  }
  return name;
}

/** Starts the shared services, runs `runTap` with their addresses in its environment, stops them; resolves with tap's exit code. */
export async function runWithSharedServices(runTap: (env: NodeJS.ProcessEnv) => Promise<number>): Promise<number> {
  const logger = createRootLogger(process.env.TEST_SERVICES_LOG_LEVEL ?? 'warn');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-test-'));
  const postgres = new EmbeddedPostgresServer({ dataDir, port: 0, logger });
  const chromaExecutable = await ensureChromaVenv({ cacheDir: cacheDir(''), version: '1.5.9', python: 'python3', logger });
  const chroma = new EmbeddedChroma({ executable: chromaExecutable, dataDir, startupTimeoutMs: 120_000, logger });

  const servers: EmbeddedServer[] = [postgres, chroma];

  let code = 1;
  try {
    const [ferretdb, schemathesis, chromium] = await Promise.all([
      ensureFerretDb({ cacheDir: cacheDir(''), logger }),
      ensurePipTool(SCHEMATHESIS, { cacheDir: cacheDir(''), python: 'python3', logger }),
      ensureChromium(logger),
      ...servers.map((server) => server.start()),
    ]);
    code = await runTap({
      ...process.env,
      TEST_PG_ADMIN_URL: postgres.url('postgres'),
      TEST_PG_TEMPLATE: await migratedTemplate(postgres.url('postgres'), logger),
      TEST_CHROMA_URL: chroma.url(),
      TEST_FERRETDB_BIN: ferretdb,
      TEST_SCHEMATHESIS_BIN: schemathesis,
      TEST_CHROMIUM_BIN: chromium,
    });
  } finally {
    await Promise.allSettled(servers.map((server) => server.stop()));
    await rm(dataDir, { recursive: true, force: true });
  }
  return code;
}
