import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `agent-host config check --json` with only these variables: no database, no embedded servers. */
function check(env: Record<string, string>) {
  const result = spawnSync(process.execPath, [path.join(root, 'host', 'dist', 'cli.js'), 'config', 'check', '--json'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

t.test('config check prints each effective value with its source and masks secrets, starting nothing', async (t) => {
  const { code, out, err } = check({
    DATABASE_URL: 'postgres://app:hunter2@db:5432/agent_host',
    AGENT_HOST_SECRETS_KEY: 'a-secret-key-value',
    AGENT_HOST__PLUGINS__MODELS_LANGCHAIN__OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1',
  });
  t.equal(code, 0);
  const { entries, problems } = JSON.parse(out) as { entries: { key: string; value: unknown; source: string }[]; problems: string[] };
  const entry = (key: string) => entries.find((e) => e.key === key);
  t.same(
    entry('database.url'),
    { key: 'database.url', value: 'postgres://app:***@db:5432/agent_host', source: 'env DATABASE_URL' },
    'a URL keeps its shape, not its password',
  );
  t.same(entry('secrets.key'), { key: 'secrets.key', value: '***', source: 'env AGENT_HOST_SECRETS_KEY' }, 'a secret is masked');
  t.same(entry('server.port'), { key: 'server.port', value: 8080, source: 'config/default.toml' }, 'a file value names its file');
  t.equal(
    entry('plugins.models-langchain.openai_base_url')?.source,
    'env AGENT_HOST__PLUGINS__MODELS_LANGCHAIN__OPENAI_BASE_URL',
    'the generic variable with _ for - names its plugin section',
  );
  t.notMatch(out, /hunter2|a-secret-key-value/, 'no secret appears anywhere in the output');
  t.same(problems, []);
  t.equal(err, '', "no deprecation warning from restify's dependencies, or anything else, on stderr");
});

t.test('config check refuses an invalid configuration and a production one without its guards, in one line each', async (t) => {
  const invalid = check({ PORT: 'eighty' });
  t.equal(invalid.code, 1);
  t.match(invalid.err, /^agent-host: configuration invalid: PORT must be an integer/);
  const production = check({ APP_ENV: 'production' });
  t.equal(production.code, 1);
  t.match(JSON.parse(production.out).problems.join('\n'), /ADMIN_ACCESS_TOKEN_SECRET_KEY must be set/);
});
