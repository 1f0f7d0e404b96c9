import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Sequelize } from 'sequelize';
import type { Logger } from '@agent-host/sdk';
import { withAdvisoryLock } from './advisory-lock.js';
import { MigrationRecordStore } from './migration-record-store.js';

/** The lock start-up steps that must not run concurrently across instances take. */
export const STARTUP_LOCK = 'agent-host.startup';

type QueryInterface = ReturnType<Sequelize['getQueryInterface']>;
interface MigrationModule {
  up(params: { context: QueryInterface }): Promise<void>;
  down(params: { context: QueryInterface }): Promise<void>;
}

/**
 * Umzug over the compiled files of `migrations/`, recorded in `SequelizeMeta`. Loaded on first use: umzug brings its
 * command-line framework, which no other path of the host needs.
 */
async function createMigrator(sequelize: Sequelize, migrationsDir: string, logger: Logger) {
  const { SequelizeStorage, Umzug } = await import('umzug');
  return new Umzug({
    migrations: {
      glob: ['*.js', { cwd: migrationsDir }],
      // Always ESM import: umzug's default would `require` .js files under a CommonJS entry point.
      resolve: ({ name, path: file, context }) => {
        const load = () => import(pathToFileURL(file!).href) as Promise<MigrationModule>;
        return { name, up: async () => (await load()).up({ context }), down: async () => (await load()).down({ context }) };
      },
    },
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize }),
    logger: {
      // One line per migration is noise on a fresh database; the host logs the applied list once.
      info: (event) => logger.debug(event, 'migration'),
      warn: (event) => logger.warn(event, 'migration'),
      error: (event) => logger.error(event, 'migration'),
      debug: (event) => logger.debug(event, 'migration'),
    },
    create: { folder: path.resolve(migrationsDir, '..') },
  });
}

/** The migrations not yet applied, applying none (`agent-host migrate --dry-run`). */
export async function pendingMigrations(sequelize: Sequelize, migrationsDir: string, logger: Logger): Promise<string[]> {
  return (await (await createMigrator(sequelize, migrationsDir, logger)).pending()).map((m) => m.name);
}

/** Whether every compiled migration (umzug's `*.js` of `migrationsDir`) is recorded as applied. */
async function allApplied(sequelize: Sequelize, migrationsDir: string): Promise<boolean> {
  const [files, applied] = await Promise.all([readdir(migrationsDir), new MigrationRecordStore(sequelize).applied()]);
  return files.filter((name) => name.endsWith('.js')).every((name) => applied.has(name));
}

/**
 * Applies every pending migration (or those up to and including `to`, a migration's name); resolves with the names
 * applied. Host instances starting together on one database take turns. A start with nothing to apply, the usual
 * one, does not load umzug (about 0.2 s of CPU with its command-line framework).
 */
export async function migrate(sequelize: Sequelize, migrationsDir: string, logger: Logger, to?: string): Promise<string[]> {
  if (to === undefined && (await allApplied(sequelize, migrationsDir))) return [];
  return withAdvisoryLock(sequelize, STARTUP_LOCK, async () =>
    (await (await createMigrator(sequelize, migrationsDir, logger)).up(to ? { to } : {})).map((m) => m.name),
  );
}
