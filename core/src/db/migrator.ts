import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import type { Logger } from '@agent-host/sdk';

type QueryInterface = ReturnType<Sequelize['getQueryInterface']>;
interface MigrationModule {
  up(params: { context: QueryInterface }): Promise<void>;
  down(params: { context: QueryInterface }): Promise<void>;
}

/** Umzug over the compiled files of `migrations/`, recorded in `SequelizeMeta`. */
export function createMigrator(sequelize: Sequelize, migrationsDir: string, logger: Logger) {
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
      info: (event) => logger.info(event, 'migration'),
      warn: (event) => logger.warn(event, 'migration'),
      error: (event) => logger.error(event, 'migration'),
      debug: (event) => logger.debug(event, 'migration'),
    },
    create: { folder: path.resolve(migrationsDir, '..') },
  });
}

/**
 * Applies every pending migration; resolves with the names applied. Host
 * instances starting together on one database take turns: a session-level
 * advisory lock, held on a connection of its own, spans the whole run.
 */
export async function migrate(sequelize: Sequelize, migrationsDir: string, logger: Logger): Promise<string[]> {
  const { host, port, database, username, password } = sequelize.config;
  const lock = new pg.Client({ host, port: Number(port), database, user: username, password: password ?? undefined });
  await lock.connect();
  try {
    await lock.query("SELECT pg_advisory_lock(hashtext('agent-host.migrations'))");
    const applied = await createMigrator(sequelize, migrationsDir, logger).up();
    return applied.map((m) => m.name);
  } finally {
    await lock.end();
  }
}
