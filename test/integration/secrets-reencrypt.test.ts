// Issue 16 item 8 through the CLI: `agent-host secrets reencrypt` moves every stored credential to the active key,
// bound to its row, after which the old key is no longer needed.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

t.test('reencrypt round trip: rotate the key, re-encrypt, drop the old key', async (t) => {
  const [oldKey, newKey] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
  const before = await startTestHost(t, { env: { AGENT_HOST_SECRETS_KEY: oldKey } });
  const admin = new AdminClient(before.url);
  await admin.login();
  const created = (await admin.request('POST', '/mcp-credentials', { name: 'Tracking API', secret_payload: { ACCESS_TOKEN: 'tok-rotate-me' } })).body;
  const other = (await admin.request('POST', '/mcp-credentials', { name: 'Other', secret_payload: { ACCESS_TOKEN: 'tok-other' } })).body;
  const ciphertextOf = async (id: string) =>
    (await query(before.databaseUrl, 'SELECT encrypted_secret_json AS v FROM mcp_credentials WHERE id = $1', [id]))[0]!.v as string;
  const original = await ciphertextOf(created.credential_id);
  t.match(original, /^v2:[0-9a-f]{12}:/, 'stored with its key id');

  await query(before.databaseUrl, 'UPDATE mcp_credentials SET encrypted_secret_json = $2 WHERE id = $1', [other.credential_id, original]);
  await t.rejects(
    before.app.domains.mcp.credentials.secretFor(other.credential_id, { id: created.credential_id, connection_config: {} }),
    'a ciphertext copied to another row does not decrypt there',
  );
  await query(before.databaseUrl, 'DELETE FROM mcp_credentials WHERE id = $1', [other.credential_id]);
  await before.stop();

  const env = { ...process.env, APP_ENV: 'test', DATABASE_URL: before.databaseUrl, AGENT_HOST_SECRETS_KEY: newKey, AGENT_HOST_SECRETS_PREVIOUS_KEYS: oldKey };
  const run = runCli(['secrets', 'reencrypt'], env);
  t.equal((await run.exit).code, 0, `reencrypt exits 0\n${run.output()}`);
  t.match(run.output(), 'mcp_credentials.encrypted_secret_json: 1 rewritten, 0 already current');
  const rewritten = await ciphertextOf(created.credential_id);
  t.not(rewritten, original, 'the value was rewritten');

  const after = await startTestHost(t, { databaseUrl: before.databaseUrl, env: { AGENT_HOST_SECRETS_KEY: newKey } });
  t.same(
    await after.app.domains.mcp.credentials.secretFor(created.credential_id, { id: created.credential_id, connection_config: {} }),
    { ACCESS_TOKEN: 'tok-rotate-me' },
    'a host with only the new key reads it',
  );
  const again = runCli(['secrets', 'reencrypt'], env);
  await again.exit;
  t.match(again.output(), '0 rewritten, 1 already current', 'a second run has nothing to do');
});
