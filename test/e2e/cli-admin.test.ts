import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { AdminClient } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { embeddedEnv, runCli, runWithStdin, servingUrl } from '../helpers/cli.js';

async function embeddedDatabaseUrl(dataDir: string): Promise<string> {
  const password = (await readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const port = (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3]!.trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/agent_host`;
}

t.test('agent-host admin create-super-admin on the embedded default', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const password = 'ops-chosen-password-4711';
  const pipedPassword = 'piped-password-0815 with spaces';
  const env = embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, LOG_LEVEL: 'error' });
  const create = (username: string, extra: Record<string, string> = {}) =>
    runCli(['admin', 'create-super-admin', '--username', username], { ...env, ...extra });

  const first = create('ops-admin', { ADMIN_PASSWORD: password });
  t.equal((await first.exit).code, 0, `ADMIN_PASSWORD: exits 0\n${first.output()}`);
  t.match(first.output(), /created super admin "ops-admin"/);
  t.notMatch(first.output(), password, 'the chosen password is not printed');

  const again = create('OPS-Admin', { ADMIN_PASSWORD: 'another-password-1234' });
  t.equal((await again.exit).code, 1, 'an existing username (in any letter case) exits 1');
  t.match(again.output(), /agent-host: administrator "OPS-Admin" already exists; choose another username/);

  const generated = create('gen-admin');
  t.equal((await generated.exit).code, 0, `empty stdin: exits 0\n${generated.output()}`);
  const oneTime = /created super admin "gen-admin"; one-time password (\S+)/.exec(generated.output())?.[1];
  t.ok(oneTime && oneTime.length >= 16, 'a generated password is printed once');

  const piped = await runWithStdin(['admin', 'create-super-admin', '--username', 'piped-admin'], env, `${pipedPassword}\nsecond line is ignored\n`);
  t.equal(piped.code, 0, `piped stdin: exits 0\n${piped.output}`);
  t.notMatch(piped.output, 'one-time password', 'the piped password is used, not a generated one');

  const weak = create('weak-admin', { ADMIN_PASSWORD: 'short' });
  t.equal((await weak.exit).code, 1, 'a short password exits 1');
  t.match(weak.output(), /agent-host: password must be 12-1024 characters/);

  const run = runCli(['start'], env);
  t.teardown(() => void run.child.kill('SIGKILL'));
  const url = await servingUrl(run);
  t.notMatch(run.output(), /first super admin created/, 'no bootstrap admin once an administrator exists');

  for (const [username, secret] of [
    ['ops-admin', password],
    ['gen-admin', oneTime!],
    ['piped-admin', pipedPassword],
  ] as const) {
    const client = new AdminClient(url);
    const login = await client.login(username, secret);
    t.equal(login.status, 200, `${username} logs in over HTTP`);
    t.equal(login.body.role_code, 'super_admin', `${username} is a super admin`);
  }
  t.equal((await new AdminClient(url).login('weak-admin', 'short')).status, 401, 'the refused user was not created');

  const databaseUrl = await embeddedDatabaseUrl(dataDir);
  const users = await query(databaseUrl, 'SELECT id, username, role_code, password_hash FROM admin_users ORDER BY created_at');
  t.same(
    users.map((u) => [u.username, u.role_code]),
    [
      ['ops-admin', 'super_admin'],
      ['gen-admin', 'super_admin'],
      ['piped-admin', 'super_admin'],
    ],
    'exactly the created users',
  );
  t.ok(
    users.every((u) => u.password_hash.startsWith('$argon2id$')),
    'passwords are stored as argon2id hashes',
  );
  const audits = await query(
    databaseUrl,
    "SELECT outcome, actor_id, target_type, target_id, payload FROM admin_action_audits WHERE action = 'admin_user.create' ORDER BY id",
  );
  t.same(
    audits.map((a) => [a.outcome, a.actor_id, a.target_type, a.target_id, a.payload.username]),
    users.map((u) => ['success', 'cli', 'admin_user', u.id, u.username]),
    'one success audit row per created user',
  );

  run.child.kill('SIGTERM');
  t.equal((await run.exit).code, 0, 'the host stops cleanly');
});
