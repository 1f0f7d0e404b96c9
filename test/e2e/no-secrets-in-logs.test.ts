import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { AdminClient } from '../helpers/host.js';
import { embeddedEnv, runCli, servingUrl } from '../helpers/cli.js';

const ADMIN = { username: 'log-admin', password: 'bootstrap-password-Kq7ZxW2v' };
const WRONG_PASSWORD = 'wrong-password-Vb9TnR4e';
const INVALID_BODY_PASSWORD = 'rejected-body-password-Hs3LmP8c';
const SIGNING_KEY = 'no-secrets-signing-key-Xw4Jd9Qe-with-enough-entropy';

interface LogLine {
  msg?: string;
  method?: string;
  url?: string;
  status?: number;
}

t.test('with LOG_LEVEL=debug, no password, cookie or token reaches stdout or stderr', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-e2e-'));
  await chmod(dataDir, 0o755);
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const run = runCli(
    ['start'],
    embeddedEnv({
      AGENT_HOST_DATA_DIR: dataDir,
      LOG_LEVEL: 'debug',
      ADMIN_BOOTSTRAP_USERNAME: ADMIN.username,
      ADMIN_BOOTSTRAP_PASSWORD: ADMIN.password,
      ADMIN_ACCESS_TOKEN_SECRET_KEY: SIGNING_KEY,
    }),
  );
  t.teardown(() => void run.child.kill('SIGKILL'));
  const url = await servingUrl(run);

  // Every token the host hands out, as it is handed out.
  const tokens = new Set<string>();
  const admin = new AdminClient(url);
  const keep = () => {
    for (const cookie of admin.cookies.values()) tokens.add(cookie.value);
  };

  t.equal((await new AdminClient(url).login(ADMIN.username, WRONG_PASSWORD)).status, 401, 'a failed login');
  t.equal(
    (await new AdminClient(url).request('POST', '/admin/auth/login', { username: ADMIN.username, password: INVALID_BODY_PASSWORD, extra: true })).status,
    422,
    'a refused login body',
  );
  t.equal((await admin.login(ADMIN.username, ADMIN.password)).status, 200, 'login');
  keep();
  t.equal((await admin.request('GET', '/admin/auth/me')).status, 200, 'an authenticated request');
  t.equal((await admin.request('POST', '/admin/auth/refresh')).status, 200, 'refresh');
  keep();
  const challenge = await admin.request('POST', '/admin/auth/challenges');
  t.equal(challenge.status, 200, 'challenge created');
  const wrongChallenge = await admin.request('POST', '/admin/auth/challenges');
  t.equal(
    (
      await admin.request('POST', `/admin/auth/challenges/${wrongChallenge.body.challenge_id}/verify`, {
        nonce: wrongChallenge.body.nonce,
        password: WRONG_PASSWORD,
      })
    ).status,
    403,
    'a failed challenge verify',
  );
  const verified = await admin.request('POST', `/admin/auth/challenges/${challenge.body.challenge_id}/verify`, {
    nonce: challenge.body.nonce,
    password: ADMIN.password,
  });
  t.equal(verified.status, 200, 'challenge verified');
  t.ok(verified.body.challenge_token, 'a challenge token was issued');
  tokens.add(verified.body.challenge_token);
  const access = admin.cookies.get('agent_host_access')!.value;
  t.equal((await admin.request('POST', '/admin/auth/logout')).status, 200, 'logout');
  t.equal(
    (await admin.request('GET', '/admin/auth/me', undefined, { cookie: `agent_host_access=${access}` })).status,
    401,
    'a revoked access token is refused',
  );

  run.child.kill('SIGTERM');
  t.equal((await run.exit).code, 0, 'the host stops cleanly');
  const output = run.output();

  t.equal(tokens.size, 5, 'two access tokens, two refresh tokens and a challenge token were issued');
  const secrets: [string, string][] = [
    ['the administrator password', ADMIN.password],
    ['the wrong password', WRONG_PASSWORD],
    ['the password of a refused body', INVALID_BODY_PASSWORD],
    ['the token signing key', SIGNING_KEY],
    ...[...tokens].map((token, i): [string, string] => [`issued token ${i + 1}`, token]),
    // A JWT's signature alone would do as much harm as the whole token.
    ...[...tokens].filter((token) => token.split('.').length === 3).map((token, i): [string, string] => [`signature of JWT ${i + 1}`, token.split('.')[2]!]),
  ];
  for (const [label, secret] of secrets) {
    t.ok(secret.length >= 16, `${label} is long enough to search for`);
    t.notOk(output.includes(secret), `${label} does not appear in the output`);
    t.notOk(output.includes(encodeURIComponent(secret)), `${label} does not appear URL-encoded`);
  }

  // The output must hold the request log lines, or the checks above would prove nothing.
  const lines: LogLine[] = output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
  const requests = lines.filter((l) => l.msg === 'request').map((l) => `${l.method} ${l.url} ${l.status}`);
  for (const expected of [
    'POST /admin/auth/login 401',
    'POST /admin/auth/login 422',
    'POST /admin/auth/login 200',
    'POST /admin/auth/refresh 200',
    'POST /admin/auth/challenges 200',
    'POST /admin/auth/logout 200',
    'GET /admin/auth/me 401',
  ]) {
    t.ok(requests.includes(expected), `a request line is logged for ${expected}`);
  }
  t.ok(
    requests.some((r) => /^POST \/admin\/auth\/challenges\/[\w-]+\/verify 403$/.test(r)),
    'a request line is logged for the failed verify',
  );
  t.ok(
    requests.some((r) => /^POST \/admin\/auth\/challenges\/[\w-]+\/verify 200$/.test(r)),
    'a request line is logged for the verify',
  );
});
