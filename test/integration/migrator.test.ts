// Migrations at start-up: applied once, in order, by umzug; a start with nothing to apply reads umzug's record and
// does not load umzug, whose command-line framework took about 0.2 s of every start.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Logger } from '@agent-host/sdk';
import t from 'tap';
import { openDatabase } from '../../core/src/db/database.js';
import { migrate } from '../../core/src/db/migrator.js';
import { MIGRATIONS_DIR } from '../../core/src/paths.js';
import { createTestDatabase } from '../helpers/services.js';

const noop = () => {};
const quietLog: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => quietLog };
const umzugLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/node_modules/umzug/'));
const migrations = readdirSync(MIGRATIONS_DIR)
  .filter((name) => name.endsWith('.js'))
  .sort();

t.test('on a database with every migration applied, a start applies none and loads no umzug', async (t) => {
  const sequelize = openDatabase(await createTestDatabase(t), 2);
  t.teardown(() => sequelize.close());
  t.same(await migrate(sequelize, MIGRATIONS_DIR, quietLog), [], 'nothing to apply');
  t.notOk(umzugLoaded(), 'umzug was not loaded');
});

t.test('on a new database every migration is applied in order, and the next start applies none', async (t) => {
  const sequelize = openDatabase(await createTestDatabase(t, { empty: true }), 2);
  t.teardown(() => sequelize.close());
  t.same(await migrate(sequelize, MIGRATIONS_DIR, quietLog), migrations, `all ${migrations.length} applied`);
  t.ok(umzugLoaded(), 'by umzug');
  t.same(await migrate(sequelize, MIGRATIONS_DIR, quietLog), [], 'and none the next time');
});

t.test('a database one migration behind gets that one', async (t) => {
  const sequelize = openDatabase(await createTestDatabase(t, { empty: true }), 2);
  t.teardown(() => sequelize.close());
  await migrate(sequelize, MIGRATIONS_DIR, quietLog, migrations.at(-2));
  t.same(await migrate(sequelize, MIGRATIONS_DIR, quietLog), migrations.slice(-1), 'the last one only');
});
