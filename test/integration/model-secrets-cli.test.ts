// `agent-host secrets encrypt` and a host using what it printed: the openai provider of models-langchain, configured
// with an encrypted key in the model catalog, answers a turn against an OpenAI-compatible fixture server, and a
// ciphertext under another key fails that model's turn, naming it.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createSecrets, parseSecretsKey } from '../../core/src/services/secrets.js';
import { startOpenAiFixture, type OpenAiFixture, type OpenAiFixtureOptions } from '../fixtures/openai-server.js';
import { embeddedEnv, runWithStdin } from '../helpers/cli.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { startedFixture, type Test } from '../helpers/model-provider.js';
import { query } from '../helpers/services.js';
import { tokensOf as eventText } from '../helpers/sse.js';

const fixture = (tt: Test, respond?: OpenAiFixtureOptions['respond']): Promise<OpenAiFixture> => startedFixture(tt, startOpenAiFixture, respond);
const authorizations = (server: OpenAiFixture) => server.requests.map((r) => r.headers.authorization);

/** A config file whose model catalog is `entries` (openai models with the given options). */
function catalogToml(entries: [string, Record<string, string>][]): string {
  return entries
    .map(([name, options]) =>
      [
        '[[models.catalog]]',
        `model_name = ${JSON.stringify(name)}`,
        'model_provider = "openai"',
        'description = "a test model"',
        'category = "chat"',
        `options = { ${Object.entries(options)
          .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
          .join(', ')} }`,
      ].join('\n'),
    )
    .join('\n\n');
}

t.test('agent-host secrets encrypt: the host decrypts what it prints; a bad ciphertext fails the turn, naming the model', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'hello from the vault model' }));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-secrets-'));
  tt.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const cliEnv = embeddedEnv({ AGENT_HOST_DATA_DIR: dataDir, AGENT_HOST_SECRETS_KEY: '' });

  const made = await runWithStdin(['secrets', 'encrypt'], cliEnv, 'sk-made-by-the-cli\n');
  tt.equal(made.code, 0, `exits 0\n${made.output}`);
  const ciphertext = made.stdout.trim();
  tt.match(ciphertext, /^v2:[0-9a-f]{12}:[\w-]+:[\w-]+:[\w-]+$/, 'stdout is the ciphertext alone, naming its key');
  tt.notMatch(made.output, 'sk-made-by-the-cli', 'the plaintext is not printed');
  tt.equal((await stat(path.join(dataDir, 'secrets.key'))).mode & 0o777, 0o600, 'without a configured key, the data-dir key is generated (mode 600)');

  const empty = await runWithStdin(['secrets', 'encrypt'], cliEnv, '');
  tt.equal(empty.code, 1, 'empty input exits 1');
  tt.match(empty.output, /agent-host: nothing to encrypt: the secret is empty/);

  const configuredKey = randomBytes(32).toString('base64');
  const keyedDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-secrets-'));
  tt.teardown(() => rm(keyedDir, { recursive: true, force: true }));
  const keyed = await runWithStdin(
    ['secrets', 'encrypt'],
    embeddedEnv({ AGENT_HOST_DATA_DIR: keyedDir, AGENT_HOST_SECRETS_KEY: configuredKey }),
    'sk-under-the-configured-key\n',
  );
  tt.equal(
    createSecrets(parseSecretsKey(configuredKey)).decrypt(keyed.stdout.trim()),
    'sk-under-the-configured-key',
    'with AGENT_HOST_SECRETS_KEY the ciphertext is made under that key',
  );
  tt.notOk(existsSync(path.join(keyedDir, 'secrets.key')), 'and no data-dir key is generated');

  const configFile = path.join(dataDir, 'models.toml');
  await writeFile(
    configFile,
    catalogToml([
      ['vault-model', { base_url: server.url, api_key_encrypted: ciphertext }],
      ['broken-vault-model', { base_url: server.url, api_key_encrypted: keyed.stdout.trim() }],
    ]),
  );
  const host = await startTestHost(tt, { env: { AGENT_HOST_DATA_DIR: dataDir, AGENT_HOST_SECRETS_KEY: '', AGENT_HOST_CONFIG: configFile } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const turn = (thread_id: string, model_name: string) => admin.stream({ thread_id, message: 'hi', model_provider: 'openai', model_name });

  const ok = await turn('vault-1', 'vault-model');
  tt.equal(eventText(ok.events), 'hello from the vault model', 'the turn is answered');
  tt.same(authorizations(server), ['Bearer sk-made-by-the-cli'], 'the key the CLI encrypted reaches the server');

  const bad = await turn('vault-2', 'broken-vault-model');
  tt.same(
    bad.events.map((e) => e.type),
    ['error', 'done'],
    'a ciphertext under another key gives an error event, then done',
  );
  tt.match(
    bad.events[0]?.content,
    /^the model failed to answer: model broken-vault-model: options\.api_key_encrypted cannot be decrypted/,
    'the error event names the model and why',
  );
  tt.notMatch(bad.events[0]?.content, 'sk-under-the-configured-key', 'and carries no key');
  const [failed] = await query(host.databaseUrl, 'SELECT status FROM conversation_turns WHERE session_id = $1', ['vault-2']);
  tt.equal(failed?.status, 'failed', 'the turn is recorded as failed');
  tt.equal(server.requests.length, 1, 'the failing model sent no request');
  tt.equal(eventText((await turn('vault-3', 'vault-model')).events), 'hello from the vault model', 'the host keeps serving');
});
