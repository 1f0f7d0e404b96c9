// Data access in one place per domain (issue 14, item 9): SQL is written only in a domain's store modules
// (`<domain>/<name>-store.ts`) and in `core/src/db` (the pool, keyset pages, prepared statements, locks) and
// `core/src/infra` (the embedded Postgres); services and routes keep the rules and call their stores.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RUNTIME_CONFIG_TABLES } from '../../core/src/db/runtime-config-cache.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A string literal that opens an SQL statement (the codebase writes SQL keywords in capitals), or a call of the keyset
 * pager, which takes SQL fragments.
 */
const SQL = /[`'"]\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\s|\bnewestFirst\s*[<(]/;
const mayWriteSql = (file: string) => /-store\.ts$/.test(file) || file.startsWith('core/src/db/') || file.startsWith('core/src/infra/');

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sources(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

const writesSql = (file: string) => SQL.test(readFileSync(path.join(root, file), 'utf8'));

t.test('SQL is written in store modules only', async (t) => {
  const plugins = readdirSync(path.join(root, 'plugins'))
    .map((id) => `plugins/${id}/src`)
    .filter((dir) => existsSync(path.join(root, dir)));
  const files = ['core/src', 'host/src', ...plugins].flatMap(sources);
  t.same(
    files.filter((file) => writesSql(file) && !mayWriteSql(file)),
    [],
    'a module writes SQL outside a store: put it in <domain>/<name>-store.ts',
  );
  t.ok(
    files.some((file) => /-store\.ts$/.test(file) && writesSql(file)),
    'the check sees SQL where it belongs (a store module)',
  );
});

t.test('the check sees SQL in a service module', async (t) => {
  t.ok(SQL.test("await this.db.query('DELETE FROM agents WHERE id = $1', { bind: [id] });"));
  t.ok(SQL.test('`\n  SELECT * FROM agents`'));
  t.ok(SQL.test("return newestFirst(this.db, { from: 'mcp_servers', where: 'true', bind: [] }, page, present);"), 'nor SQL fragments for the pager');
  t.notOk(SQL.test("throw new ConflictError('cannot update the agent now');"), 'words in a message are not SQL');
});

/** A statement that changes one of the tables a turn's runtime configuration is cached from. */
const RUNTIME_CONFIG_WRITE = new RegExp(`(INSERT INTO|UPDATE|DELETE FROM|TRUNCATE) (${RUNTIME_CONFIG_TABLES.join('|')})\\b`);

t.test('every write to a runtime config table drops the cached configuration as it commits', async (t) => {
  const stores = sources('core/src').filter((file) => /-store\.ts$/.test(file));
  const writers: string[] = [];
  for (const file of stores) {
    // One piece per method: each that writes such a table must say so (`SqlStore.runtimeConfigChanged`).
    for (const method of readFileSync(path.join(root, file), 'utf8').split(/\n {2}(?=(?:async )?\w+\()/)) {
      if (!RUNTIME_CONFIG_WRITE.test(method)) continue;
      writers.push(`${file} ${method.slice(0, method.indexOf('('))}`);
      t.ok(method.includes('this.runtimeConfigChanged(transaction)'), `${file}: ${method.slice(0, 60)} calls runtimeConfigChanged`);
    }
  }
  t.ok(writers.length >= 20, `the check finds the writers (${writers.length})`);
});
