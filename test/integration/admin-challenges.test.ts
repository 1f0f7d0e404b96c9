import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { challengeToken } from '../helpers/admins.js';
import { query } from '../helpers/services.js';

const KEY = 'agent.system_prompt_max_length';

const patch = (client: AdminClient, value: unknown, token?: string, key = KEY) =>
  client.request('PATCH', `/admin/system-settings/${key}`, { value }, token ? { 'x-admin-challenge-token': token } : {});

t.test('challenges and the sensitive system-settings write', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();

  t.test('create returns id, nonce and expiry; verify returns a single-use token', async (t) => {
    const { status, body } = await admin.request('POST', '/admin/auth/challenges');
    t.equal(status, 200);
    t.same(Object.keys(body).sort(), ['challenge_id', 'expires_at', 'nonce']);
    t.ok(Date.parse(body.expires_at) > Date.now());
    const verified = await admin.request('POST', `/admin/auth/challenges/${body.challenge_id}/verify`, {
      nonce: body.nonce,
      password: BOOTSTRAP_ADMIN.password,
    });
    t.equal(verified.status, 200);
    t.type(verified.body.challenge_token, 'string');
    const again = await admin.request('POST', `/admin/auth/challenges/${body.challenge_id}/verify`, { nonce: body.nonce, password: BOOTSTRAP_ADMIN.password });
    t.equal(again.status, 403, 'a verified challenge cannot be verified twice');
  });

  t.test('a failed verify burns the challenge: the right password afterwards is refused', async (t) => {
    for (const wrong of [{ password: 'wrong' }, { nonce: 'wrong-nonce' }]) {
      const { body: challenge } = await admin.request('POST', '/admin/auth/challenges');
      const failed = await admin.request('POST', `/admin/auth/challenges/${challenge.challenge_id}/verify`, {
        nonce: challenge.nonce,
        password: BOOTSTRAP_ADMIN.password,
        ...wrong,
      });
      t.equal(failed.status, 403);
      t.match(failed.body.detail, /burned, request a new one/);
      const retry = await admin.request('POST', `/admin/auth/challenges/${challenge.challenge_id}/verify`, {
        nonce: challenge.nonce,
        password: BOOTSTRAP_ADMIN.password,
      });
      t.equal(retry.status, 403);
      t.match(retry.body, { detail: 'challenge is burned; request a new one', code: 'CHALLENGE_REFUSED', request_id: String });
    }
  });

  t.test('the write needs a challenge token, and a token works once', async (t) => {
    const missing = await patch(admin, 1234);
    t.equal(missing.status, 403);
    t.match(missing.body, {
      detail: 'challenge required: send x-admin-challenge-token from a verified challenge',
      code: 'CHALLENGE_REQUIRED',
      request_id: String,
    });
    const token = await challengeToken(admin);
    const ok = await patch(admin, 1234, token);
    t.equal(ok.status, 200);
    t.same([ok.body.config_key, ok.body.value, ok.body.source], [KEY, 1234, 'database']);
    const reused = await patch(admin, 999, token);
    t.equal(reused.status, 403);
    t.match(reused.body, { detail: 'challenge token was already used; request a new challenge', code: 'CHALLENGE_REFUSED', request_id: String });
    t.equal(await host.app.domains.systemSettings.value(KEY), 1234, 'the new value takes effect without a restart');
  });

  t.test('a refusal for the challenge leaves a failure audit row with the reason, though the change rolled back', async (t) => {
    const refusals = () =>
      query<{ reason: string }>(
        host.databaseUrl,
        "SELECT payload->>'reason' AS reason FROM admin_action_audits WHERE action = 'auth.challenge.consume' AND outcome = 'failure' ORDER BY created_at, id",
      );
    const before = (await refusals()).length;
    await patch(admin, 77);
    const token = await challengeToken(admin);
    await patch(admin, 78, token);
    await patch(admin, 79, token);
    const stale = await challengeToken(admin);
    await query(host.databaseUrl, "UPDATE admin_challenges SET token_expires_at = now() - interval '1 second' WHERE status = 'verified'");
    await patch(admin, 80, stale);
    t.same(
      (await refusals()).slice(before).map((r) => r.reason),
      ['challenge_missing', 'challenge_used', 'challenge_stale'],
      'missing, burnt (used) and stale tokens are audited, each with its reason',
    );
  });

  t.test('a stale token is refused', async (t) => {
    const token = await challengeToken(admin);
    await query(host.databaseUrl, "UPDATE admin_challenges SET token_expires_at = now() - interval '1 second' WHERE status = 'verified'");
    const stale = await patch(admin, 5, token);
    t.equal(stale.status, 403);
    t.match(stale.body, { detail: 'challenge token is stale; request a new challenge', code: 'CHALLENGE_REFUSED', request_id: String });
  });

  t.test("another administrator's token is refused", async (t) => {
    const id = randomUUID();
    await query(host.databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code) VALUES ($1, 'settings-admin', $2, 'sub_admin')", [
      id,
      await hash('sa-password'),
    ]);
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'system_settings.write')", [
      randomUUID(),
      id,
    ]);
    const other = new AdminClient(host.url);
    await other.login('settings-admin', 'sa-password');
    const foreign = await patch(other, 6, await challengeToken(admin));
    t.equal(foreign.status, 403);
    t.match(foreign.body, { detail: 'challenge token belongs to another administrator', code: 'CHALLENGE_REFUSED', request_id: String });
    t.equal((await patch(other, 6, await challengeToken(other, 'sa-password'))).status, 200, 'its own token works');
  });

  t.test('a token is revoked with its session', async (t) => {
    const client = new AdminClient(host.url);
    await client.login();
    const token = await challengeToken(client);
    await client.request('POST', '/admin/auth/logout');
    await client.login();
    const revoked = await patch(client, 7, token);
    t.equal(revoked.status, 403);
    t.match(revoked.body, { detail: 'challenge token was revoked with its session; request a new challenge', code: 'CHALLENGE_REFUSED', request_id: String });
  });

  t.test('an unknown key is 404 and an invalid value 400, both audited as failures', async (t) => {
    const unknown = await patch(admin, 1, await challengeToken(admin), 'agent.no_such_setting');
    t.equal(unknown.status, 404);
    const invalid = await patch(admin, -3, await challengeToken(admin));
    t.equal(invalid.status, 400);
    t.match(invalid.body.detail, /invalid value for agent\.system_prompt_max_length/);
    const rows = await query(
      host.databaseUrl,
      "SELECT target_id, payload->>'reason' AS reason FROM admin_action_audits WHERE action = 'system_setting.update' AND outcome = 'failure' ORDER BY id",
    );
    t.same(
      rows.map((r) => [r.target_id, r.reason]),
      [
        ['agent.no_such_setting', 'unknown_key'],
        [KEY, 'invalid_value'],
      ],
    );
  });

  t.test('the change and its audit record commit together: a failing audit write rolls the change back', async (t) => {
    await query(
      host.databaseUrl,
      `CREATE FUNCTION refuse_audit() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit store unavailable'; END $$ LANGUAGE plpgsql`,
    );
    await query(
      host.databaseUrl,
      "CREATE TRIGGER refuse_audit BEFORE INSERT ON admin_action_audits FOR EACH ROW WHEN (NEW.action = 'system_setting.update' AND NEW.outcome = 'success') EXECUTE FUNCTION refuse_audit()",
    );
    const before = await host.app.domains.systemSettings.value(KEY);
    const token = await challengeToken(admin);
    const failed = await patch(admin, 4321, token);
    t.equal(failed.status, 500);
    t.match(failed.body, { detail: 'internal server error', code: 'INTERNAL_ERROR', request_id: String }, 'the cause is not shown to the caller');
    t.equal(await host.app.domains.systemSettings.value(KEY), before, 'the setting is unchanged');
    const [challenge] = await query(
      host.databaseUrl,
      "SELECT status FROM admin_challenges WHERE status IN ('verified', 'used') ORDER BY created_at DESC LIMIT 1",
    );
    t.equal(challenge!.status, 'verified', 'the challenge was not spent either');
    await query(host.databaseUrl, 'DROP TRIGGER refuse_audit ON admin_action_audits');
    t.equal((await patch(admin, 4321, token)).status, 200, 'with the audit store back, the same token succeeds');
  });

  t.test('GET /admin/system-settings lists effective values and needs system_settings.read', async (t) => {
    const { status, body } = await admin.request('GET', '/admin/system-settings');
    t.equal(status, 200);
    const item = body.items.find((i: { config_key: string }) => i.config_key === KEY);
    t.equal(item.value, 4321);
    t.equal(item.default_value, 30000);
    const judge = body.items.find((i: { config_key: string }) => i.config_key === 'agent.judge_prompt_max_length');
    t.same([judge.value, judge.source], [30000, 'config']);
    const anonymous = await fetch(host.url + '/admin/system-settings');
    t.equal(anonymous.status, 401);
  });
});
