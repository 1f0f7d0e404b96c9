import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { query } from '../helpers/services.js';
import { alive, commandOf, descendants, embeddedEnv, runCli, servingUrl } from '../helpers/cli.js';
import { parentOf } from '../../core/src/infra/process/proc.js';

const BOOTSTRAP = { username: 'e2e-admin', password: 'an-e2e-password-123' };

// Its hosts start and stop real embedded Postgres and Chroma servers many times: 250 to 280 s on a 2-core CI machine,
// and 300 s (tap's usual bound) was crossed once when that machine was busier. 600 s still catches a hang.
t.setTimeout(600_000);

/** A fresh data directory, removed when the test ends. */
async function dataDirFor(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  return dataDir;
}

/** `agent-host start` on a fresh data directory; killed when the test ends. */
async function startEmbedded(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}) {
  const dataDir = await dataDirFor(t);
  const run = runCli(['start'], embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, ...env }));
  t.teardown(() => void run.child.kill('SIGKILL'));
  return { dataDir, run, url: await servingUrl(run) };
}

/**
 * Polls /readyz until it answers `status` (or the time runs out); resolves with the last response. A request that
 * fails on the network (a kept-alive connection the host closed just as it was reused) is asked again; when none
 * answered, the last failure is thrown.
 */
async function readinessBecomes(url: string, status: number, timeoutMs: number): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let response: Response | undefined;
  let failure: unknown;
  for (;;) {
    try {
      response = await fetch(`${url}/readyz`);
      if (response.status === status) return response;
    } catch (error) {
      failure = error;
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!response) throw failure;
  return response;
}

async function embeddedDatabaseUrl(dataDir: string): Promise<string> {
  const password = (await readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const port = (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3]!.trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/agent_host`;
}

t.test('agent-host start on the embedded default: serves, survives a restart, stops cleanly on SIGTERM', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, ADMIN_BOOTSTRAP_USERNAME: BOOTSTRAP.username, ADMIN_BOOTSTRAP_PASSWORD: BOOTSTRAP.password });
  const instances: string[] = [];

  for (const round of [1, 2]) {
    const run = runCli(['start'], env);
    t.teardown(() => void run.child.kill('SIGKILL'));
    const url = await servingUrl(run);
    t.match(run.output(), new RegExp(`data dir:\\s+${dataDir}`), 'the banner names the data directory');

    const health = await (await fetch(`${url}/healthz`)).json();
    t.equal(health.status, 'ok', `round ${round}: /healthz status ok`);
    t.equal(health.guard_state, 'ok', `round ${round}: guard_state ok with embedded Postgres and Chroma`);
    instances.push(health.app_instance);

    const login = await fetch(`${url}/admin/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BOOTSTRAP) });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const orchestrators = await (await fetch(`${url}/chat-orchestrators`, { headers: { cookie } })).json();
    t.same(
      orchestrators.items.map((o: { key: string }) => o.key),
      ['core_chat_v1', 'react_agent_v1'],
      `round ${round}: orchestrators listed`,
    );

    const rows = await query(await embeddedDatabaseUrl(dataDir), 'SELECT id, stopped_at FROM host_instances ORDER BY started_at');
    t.same(
      rows.map((r) => r.id),
      instances,
      `round ${round}: every instance recorded so far is still in the database`,
    );
    if (round === 2) t.ok(rows[0]!.stopped_at, 'the first run recorded its clean stop');

    const children = descendants(run.child.pid!);
    t.ok(
      children.some((pid) => /postgres/.test(commandOf(pid))),
      'embedded Postgres runs as a child of the host',
    );
    t.ok(
      children.some((pid) => /chroma/.test(commandOf(pid))),
      'embedded Chroma runs as a child of the host',
    );

    const stopped = Date.now();
    run.child.kill('SIGTERM');
    const { code } = await run.exit;
    t.equal(code, 0, `round ${round}: SIGTERM exits 0`);
    t.ok(Date.now() - stopped < 10_000, `round ${round}: SIGTERM ends the host within 10 s (took ${Date.now() - stopped} ms)`);
    const left = children.filter(alive);
    t.same(left.map(commandOf), [], `round ${round}: no Postgres or Chroma process is left running`);
  }
});

t.test('start-up refusals print one clear message, exit 1 and leave nothing running', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  const production = runCli(
    ['start'],
    embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, APP_ENV: 'production', ADMIN_ACCESS_COOKIE_SECURE: 'false', ADMIN_ACCESS_TOKEN_SECRET_KEY: '' }),
  );
  const prodExit = await production.exit;
  t.equal(prodExit.code, 1, 'production without its guards exits 1');
  t.match(
    production.output(),
    /production guard refused start-up: ADMIN_ACCESS_TOKEN_SECRET_KEY must be set when APP_ENV=production; ADMIN_ACCESS_COOKIE_SECURE must be true/,
  );

  const badPlugin = runCli(
    ['start'],
    embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, AGENT_HOST__PLUGINS__ENABLED: '["./test/fixtures/plugins/kernel/init-throws"]' }),
  );
  const pids = new Set<number>();
  const watcher = setInterval(() => descendants(badPlugin.child.pid!).forEach((pid) => pids.add(pid)), 50);
  const pluginExit = await badPlugin.exit;
  clearInterval(watcher);
  t.equal(pluginExit.code, 1, 'a refused plugin exits 1');
  t.match(badPlugin.output(), /agent-host: plugin "init-throws" refused \(init_failed\): init threw: cannot reach the license server/);
  t.same([...pids].filter(alive).map(commandOf), [], 'embedded services started before the refusal are stopped');
});

/** Runs `agent-host start` to its exit, watching which processes it started; its refusal must be one line. */
async function refusedStart(t: { teardown(fn: () => unknown): void }, env: Record<string, string>) {
  const dataDir = await dataDirFor(t);
  const run = runCli(['start'], embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, ...env }));
  const pids = new Set<number>();
  const watcher = setInterval(() => descendants(run.child.pid!).forEach((pid) => pids.add(pid)), 50);
  const { code } = await run.exit;
  clearInterval(watcher);
  const refusals = run
    .output()
    .split('\n')
    .filter((line) => line.startsWith('agent-host: '));
  return { code, refusals, output: run.output(), leftover: [...pids].filter(alive).map(commandOf), dataDir };
}

t.test('embedded servers that cannot start say so in one line with what to do, exit 1 and leave nothing running', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const busy = await refusedStart(t, { AGENT_HOST__DATABASE__EMBEDDED_PORT: String(port) });
  t.equal(busy.code, 1, 'a taken Postgres port exits 1');
  t.equal(busy.refusals.length, 1, 'with one line');
  t.match(
    busy.refusals[0],
    new RegExp(
      `^agent-host: embedded Postgres failed to start in \\S+: Postgres stopped before accepting connections: could not create any TCP/IP sockets; port ${port} is in use: stop what listens there, or set \\[database\\] embedded_port \\(AGENT_HOST__DATABASE__EMBEDDED_PORT\\) to another port, or to 0 for any free one \\(its output: \\S+postgres-start\\.log\\)$`,
    ),
  );
  t.match(await readFile(path.join(busy.dataDir, 'postgres-start.log'), 'utf8'), /Address already in use/, 'the whole output is in the log it names');
  t.notMatch(busy.output, /^\s+at /m, 'no stack trace');
  t.same(busy.leftover, [], 'nothing left running');

  const cacheDir = await dataDirFor(t);
  const noPython = await refusedStart(t, { AGENT_HOST_CACHE_DIR: cacheDir, AGENT_HOST__CHROMA__PYTHON: '"/nonexistent/python3"' });
  t.equal(noPython.code, 1, 'no Python for a first Chroma install exits 1');
  t.same(noPython.refusals, [
    'agent-host: /nonexistent/python3 was not found: the embedded Chroma is installed with Python 3 and its venv module; install them, set [chroma] python (AGENT_HOST__CHROMA__PYTHON), or set CHROMA_URL to a Chroma server',
  ]);
  t.same(noPython.leftover, [], 'and stops the Postgres it had started');

  const impatient = await refusedStart(t, { AGENT_HOST__CHROMA__STARTUP_TIMEOUT_SECONDS: '0.05' });
  t.equal(impatient.code, 1, 'a Chroma slower than its start-up timeout exits 1');
  t.equal(impatient.refusals.length, 1, 'with one line');
  t.match(
    impatient.refusals[0],
    /^agent-host: the Chroma server gave no heartbeat within 0\.05 s; a first start on a slow disk can take longer: raise \[chroma\] startup_timeout_seconds \(AGENT_HOST__CHROMA__STARTUP_TIMEOUT_SECONDS\), or set CHROMA_URL to a Chroma server \(its output: \S+chroma-start\.log\)$/,
  );
  t.same(impatient.leftover, [], 'nothing left running');
});

t.test(
  'as root, a data directory the postgres user cannot reach is refused with the fix, not a crash',
  { skip: process.getuid?.() !== 0 && 'only a root host runs Postgres as another user' },
  async (t) => {
    const locked = await mkdtemp(path.join(os.tmpdir(), 'agent-host-locked-'));
    await chmod(locked, 0o700);
    t.teardown(() => rm(locked, { recursive: true, force: true }));
    const run = runCli(['start'], embeddedEnv({ AGENT_HOST_DATA_DIR: path.join(locked, 'data'), AGENT_HOST_PLUGINS_DISABLED: 'retriever-chroma' }));
    t.equal((await run.exit).code, 1, 'exits 1');
    t.match(
      run.output(),
      `agent-host: embedded Postgres runs as the postgres user (this host runs as root), which cannot enter ${locked} (mode 700)`,
      'naming the directory and the fix',
    );
    t.notMatch(run.output(), /EACCES|at .*\.js:\d+/, 'no stack trace');
  },
);

t.test("a second start on a running host's data directory refuses and leaves that host's Chroma and health alone", async (t) => {
  const { dataDir, run: first, url } = await startEmbedded(t);
  const env = embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir });
  const chromaPid = Number(await readFile(path.join(dataDir, 'chroma.pid'), 'utf8'));
  const second = runCli(['start'], env);
  const { code } = await second.exit;
  t.equal(code, 1, 'the second start exits 1');
  t.match(second.output(), /another host's (Chroma|Postgres) \(pid \d+.*\) is running on/, 'saying the data directory belongs to a running host');
  t.ok(alive(chromaPid), "the running host's Chroma is still alive");
  const health = await (await fetch(`${url}/healthz`)).json();
  t.equal(health.guard_state, 'ok', "and the running host's health stays green");
  t.equal((await fetch(`${url}/readyz`)).status, 200, 'and it stays ready');

  const dryRun = runCli(['migrate', '--dry-run'], env);
  t.equal((await dryRun.exit).code, 0, "migrate --dry-run reads the running host's database");
  t.match(dryRun.output(), /database is up to date/);
  const admin = runCli(['admin', 'create-super-admin', '--username', 'second-operator'], { ...env, ADMIN_PASSWORD: 'a-long-enough-password-1' });
  t.equal((await admin.exit).code, 0, 'admin create-super-admin works next to the running host, on its database');
  const login = await fetch(`${url}/admin/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'second-operator', password: 'a-long-enough-password-1' }),
  });
  t.equal(login.status, 200, 'the running host knows the new administrator');
  t.ok(alive(chromaPid), 'and nothing the commands did stopped its Chroma');
  const version = runCli(['version'], env);
  await version.exit;
  t.match(version.output(), /^agent-host \d+\.\d+\.\d+ \(sdk \d+\.\d+\.\d+, node \d+/, 'version needs nothing running');
  first.child.kill('SIGTERM');
  await first.exit;
});

t.test('a killed embedded Chroma makes /readyz 503 until the supervisor has restarted it', async (t) => {
  const { dataDir, run, url } = await startEmbedded(t);
  const chromaPid = Number(await readFile(path.join(dataDir, 'chroma.pid'), 'utf8'));
  const chromaEnv = await readFile(`/proc/${chromaPid}/environ`, 'utf8');
  t.notMatch(chromaEnv, 'ADMIN_ACCESS_TOKEN_SECRET_KEY', "Chroma runs without the host's environment (its signing key)");
  t.match(chromaEnv, 'PATH=', 'with what it needs');
  process.kill(chromaPid, 'SIGKILL');
  const down = await readinessBecomes(url, 503, 2000);
  t.equal(down.status, 503, 'not ready while Chroma is down');
  t.same(
    (await down.json()).failing.map((f: { name: string }) => f.name),
    ['chroma'],
  );
  t.equal((await readinessBecomes(url, 200, 60_000)).status, 200, 'ready again once the supervisor restarted it');
  const restarted = Number(await readFile(path.join(dataDir, 'chroma.pid'), 'utf8'));
  t.not(restarted, chromaPid, 'a new Chroma process');
  t.ok(alive(restarted));
  t.equal((await (await fetch(`${url}/healthz`)).json()).guard_state, 'ok', 'and health is green again');
  run.child.kill('SIGTERM');
  t.equal((await run.exit).code, 0, 'the host still stops cleanly');
  t.notOk(alive(restarted), 'taking the restarted Chroma with it');
});

t.test('a killed embedded Postgres makes /readyz 503 until the supervisor has restarted it, and the host serves again', async (t) => {
  const { dataDir, run, url } = await startEmbedded(t);
  const postmaster = Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const postgresEnv = await readFile(`/proc/${postmaster}/environ`, 'utf8');
  t.notMatch(postgresEnv, 'ADMIN_ACCESS_TOKEN_SECRET_KEY', "Postgres runs without the host's environment (its signing key)");
  t.match(postgresEnv, 'LC_MESSAGES=C', 'with what it needs');
  process.kill(postmaster, 'SIGKILL');
  // A host that died here would leave only "fetch failed": say why it died.
  const down = await readinessBecomes(url, 503, 2000).catch((error: Error) => {
    throw new Error(`${error.message}; the host's last output:\n${run.output().slice(-4000)}`);
  });
  t.equal(down.status, 503, 'not ready while Postgres is down');
  t.ok(
    (await down.json()).failing.some((f: { name: string }) => f.name === 'postgres'),
    'naming postgres',
  );
  t.equal((await readinessBecomes(url, 200, 90_000)).status, 200, 'ready again once the supervisor restarted it');
  const restarted = Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  t.not(restarted, postmaster, 'a new postmaster');
  t.notMatch(await readFile(`/proc/${restarted}/environ`, 'utf8'), 'ADMIN_ACCESS_TOKEN_SECRET_KEY', 'and so does the restarted one');
  const login = await fetch(`${url}/admin/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'nobody', password: 'wrong-password-123' }),
  });
  t.equal(login.status, 401, 'requests that need the database are served again');
  run.child.kill('SIGTERM');
  t.equal((await run.exit).code, 0, 'the host still stops cleanly');
  t.notOk(alive(restarted), 'taking the restarted Postgres with it');
});

t.test('with retriever-chroma disabled the host starts no Chroma (and needs no Python) and is ready without one', async (t) => {
  const { dataDir, run, url } = await startEmbedded(t, { AGENT_HOST_PLUGINS_DISABLED: 'retriever-chroma' });
  t.notOk(
    (await readdir(dataDir)).some((name) => name.startsWith('chroma')),
    'no Chroma directory or pid file under the data directory',
  );
  t.same(
    descendants(run.child.pid!)
      .map(commandOf)
      .filter((c) => /chroma/.test(c ?? '')),
    [],
    'no Chroma process',
  );
  const ready = await (await fetch(`${url}/readyz`)).json();
  t.same(ready, { status: 'ready', failing: [] }, 'ready without a vector store nobody uses');
  run.child.kill('SIGTERM');
  await run.exit;
});

t.test('agent-host plugins list shows what loaded, from where, versions and registrations', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const run = runCli(['plugins', 'list', '--json'], embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir }));
  const { code } = await run.exit;
  t.equal(code, 0);
  const plugins = JSON.parse(run.output().slice(run.output().indexOf('[')));
  t.same(
    plugins.map((p: any) => [p.id, p.origin, p.registered]),
    [
      ['models-langchain', 'first-party', { modelProviders: ['openai', 'anthropic', 'ollama', 'offline'] }],
      ['models-openai', 'first-party', { modelProviders: ['openai'] }],
      ['orchestrator-core-chat', 'first-party', { orchestrators: ['core_chat_v1'] }],
      ['orchestrator-react-agent', 'first-party', { orchestrators: ['react_agent_v1'] }],
      [
        'parsers-local',
        'first-party',
        {
          documentParsers: [
            'application/pdf',
            'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
            'text/html',
            'text/markdown',
            'text/x-markdown',
            'text/csv',
            'text/plain',
          ],
        },
      ],
      ['embedders', 'first-party', { embedders: ['feature-hashing', 'openai'] }],
      ['retriever-chroma', 'first-party', { retrievers: ['chroma'] }],
      ['tools-mcp', 'first-party', { toolBackends: ['stdio', 'http_sse'] }],
      ['skills-mcp', 'first-party', { skillBackends: ['mcp'] }],
      ['fusion-llm', 'first-party', { fusionRuntimes: ['fusion_llm'] }],
      ['etl-mapper', 'first-party', { etlRuntimes: ['etl_mapper'] }],
      ['recognizer-local', 'first-party', { documentRecognizers: ['local_layout'] }],
    ],
  );
  t.ok(
    plugins.every((p: any) => /^\d+\.\d+\.\d+/.test(p.version) && p.location && p.sdk),
    'each has a version, location and SDK range',
  );
  t.same(await readdir(dataDir), [], 'it started no database or server: the data directory stays empty');
});

t.test('agent-host migrate applies pending migrations once and then reports the database up to date', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir });
  const first = runCli(['migrate'], env);
  t.equal((await first.exit).code, 0);
  t.match(
    first.output(),
    /applied: 0001-host-instances\.js, 0002-audit-events\.js, 0003-model-usage-events\.js, 0004-admin-access\.js, 0005-system-settings\.js, 0006-agents\.js/,
  );
  const second = runCli(['migrate'], env);
  t.equal((await second.exit).code, 0);
  t.match(second.output(), /database is up to date/);
});

t.test('a host killed with SIGKILL leaves nothing in the way: the next start takes over its data directory', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir });
  const killed = runCli(['start'], env);
  await servingUrl(killed);
  const servers = descendants(killed.child.pid!).filter((pid) => /postgres -D|chroma/.test(commandOf(pid)));
  // A backend the postmaster has just forked still shows the postmaster's command line: count only the servers themselves.
  const orphans = servers.filter((pid) => !servers.includes(parentOf(pid) ?? -1));
  t.equal(orphans.length, 2, 'Postgres and Chroma were running');
  killed.child.kill('SIGKILL');
  await killed.exit;

  const next = runCli(['start'], env);
  t.teardown(() => void next.child.kill('SIGKILL'));
  const url = await servingUrl(next);
  const health = await (await fetch(`${url}/healthz`)).json();
  t.equal(health.guard_state, 'ok', 'the next start is healthy');
  t.same(orphans.filter(alive).map(commandOf), [], "the killed host's Postgres and Chroma were stopped");
  const children = descendants(next.child.pid!);
  next.child.kill('SIGTERM');
  t.equal((await next.exit).code, 0);
  t.same(children.filter(alive).map(commandOf), [], 'and the new ones stop with their host');
});
