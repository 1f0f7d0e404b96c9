// Issue 15 item 7: administrator API tokens, so CI jobs and backends call the control plane without a browser.
import { createHash } from 'node:crypto';
import t from 'tap';
import { challengeHeader } from '../helpers/admins.js';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

t.test('administrator API tokens', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const [root] = await query(host.databaseUrl, 'SELECT id FROM admin_users WHERE username = $1', [BOOTSTRAP_ADMIN.username]);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const call = (method: string, path: string, token: string, body?: unknown) =>
    fetch(host.url + path, {
      method,
      headers: { ...bearer(token), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const make = async (body: Record<string, unknown>) => admin.request('POST', '/admin/api-tokens', body, await challengeHeader(admin));

  t.test('making one is a sensitive operation; the token is shown once and only its hash is kept', async (t) => {
    const unchallenged = await admin.request('POST', '/admin/api-tokens', { name: 'ci' });
    t.match(unchallenged, { status: 403, body: { code: 'CHALLENGE_REQUIRED' } });
    const made = await make({ name: 'ci', expires_in_days: 30 });
    t.equal(made.status, 201);
    t.match(made.body, { name: 'ci', permissions: null, token: /^ahp_[A-Za-z0-9_-]{43}$/, revoked_at: null, last_used_at: null });
    t.ok(made.body.token.startsWith(made.body.token_prefix), 'the prefix recognises it');
    const [stored] = await query(host.databaseUrl, 'SELECT * FROM admin_api_tokens WHERE id = $1', [made.body.token_id]);
    t.equal(stored!.token_hash, createHash('sha256').update(made.body.token).digest('hex'), 'a SHA-256 hash is stored');
    t.notMatch(JSON.stringify(stored), made.body.token, 'and never the token');
    const days = (new Date(stored!.expires_at).getTime() - Date.now()) / 86_400_000;
    t.ok(days > 29.9 && days <= 30, 'it expires in 30 days');
    const listed = await admin.request('GET', '/admin/api-tokens');
    t.same(
      listed.body.items.map((i: { token_id: string }) => i.token_id),
      [made.body.token_id],
    );
    t.notOk('token' in listed.body.items[0], 'the list never shows the token');
  });

  t.test('a token acts as its administrator: /openapi.json, reads and writes, audited with the request id', async (t) => {
    const { body } = await make({ name: 'backend' });
    const doc = await call('GET', '/openapi.json', body.token);
    t.equal(doc.status, 200, 'GET /openapi.json works with a token');
    const created = await call('POST', '/agents', body.token, { name: 'Made by CI', agent_type: 'chat' });
    t.equal(created.status, 201, 'a write with the administrator permissions');
    const agent = (await created.json()) as { agent_id: string };
    const [audit] = await query(host.databaseUrl, "SELECT actor_id, request_id FROM admin_action_audits WHERE action = 'agent.create' AND target_id = $1", [
      agent.agent_id,
    ]);
    t.same(audit, { actor_id: root!.id, request_id: created.headers.get('x-request-id') }, 'audited as the administrator, with the request id');
    const [used] = await query(host.databaseUrl, 'SELECT last_used_at FROM admin_api_tokens WHERE id = $1', [body.token_id]);
    t.ok(used!.last_used_at, 'last use is recorded');
  });

  t.test('a token with a subset of permissions can do only that, and takes no challenges', async (t) => {
    const { body } = await make({ name: 'reader', permissions: ['agents.read'] });
    t.same(body.permissions, ['agents.read']);
    t.equal((await call('GET', '/agents', body.token)).status, 200, 'agents.read: allowed');
    const write = await call('POST', '/agents', body.token, { name: 'Nope', agent_type: 'chat' });
    t.match([write.status, await write.json()], [403, { code: 'PERMISSION_MISSING', detail: 'missing permission agents.write' }], 'agents.write: refused');
    const challenge = await call('POST', '/admin/auth/challenges', body.token);
    t.match([challenge.status, await challenge.json()], [403, { code: 'CHALLENGE_REQUIRED', detail: /API tokens cannot take challenges/ }]);
    const unknown = await make({ name: 'typo', permissions: ['agents.raed'] });
    t.match(unknown, { status: 422, body: { code: 'VALIDATION_FAILED', errors: [{ loc: ['body', 'permissions'], msg: 'unknown permission "agents.raed"' }] } });
  });

  t.test('revoked, expired and unknown tokens are refused with API_TOKEN_INVALID, and audited', async (t) => {
    const revoked = (await make({ name: 'short-lived' })).body;
    t.equal((await admin.request('DELETE', `/admin/api-tokens/${revoked.token_id}`)).status, 204);
    const afterRevoke = await call('GET', '/agents', revoked.token);
    t.match([afterRevoke.status, await afterRevoke.json()], [401, { code: 'API_TOKEN_INVALID' }], 'a revoked token stops at once');
    const expired = (await make({ name: 'expired', expires_in_days: 1 })).body;
    await query(host.databaseUrl, "UPDATE admin_api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.token_id]);
    t.equal((await call('GET', '/agents', expired.token)).status, 401, 'an expired token is refused');
    t.equal((await call('GET', '/agents', 'ahp_not-a-token')).status, 401, 'an unknown token is refused');
    const denials = await query(
      host.databaseUrl,
      "SELECT count(*)::int AS n FROM admin_action_audits WHERE action = 'access.denied' AND payload->>'reason' = 'api_token_invalid'",
    );
    t.equal(denials[0]!.n, 3, 'each refusal is audited');
    t.match(await admin.request('DELETE', '/admin/api-tokens/00000000-0000-0000-0000-000000000000'), { status: 404, body: { code: 'API_TOKEN_NOT_FOUND' } });
  });
});
