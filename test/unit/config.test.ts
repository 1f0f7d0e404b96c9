import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { ConfigError, DEFAULT_CONFIG_DIR, ENV_BINDINGS, loadConfig, pluginSpecifiers, productionGuardProblems } from '@agent-host/core';
import t from 'tap';

const load = (env: Record<string, string> = {}) => loadConfig({ configDir: DEFAULT_CONFIG_DIR, env });

t.test('default.toml alone is a valid development configuration', async (t) => {
  const config = load();
  t.equal(config.app.env, 'development');
  t.equal(config.agent.system_prompt_max_length, 30000);
  t.equal(config.agent.judge_prompt_max_length, 30000);
  t.equal(config.mcp.history_user_message_window, 3);
  t.same(config.plugins.enabled, [
    'models-langchain',
    'models-openai',
    'orchestrator-core-chat',
    'orchestrator-react-agent',
    'parsers-local',
    'embedders',
    'retriever-chroma',
    'tools-mcp',
    'skills-mcp',
    'fusion-llm',
    'etl-mapper',
    'recognizer-local',
  ]);
  t.same(productionGuardProblems(config), []);
});

t.test('APP_ENV=test merges test.toml over default.toml', async (t) => {
  const config = load({ APP_ENV: 'test' });
  t.equal(config.server.port, 0);
  t.equal(config.jobs.process_every, '200 milliseconds');
  t.equal(config.agent.default_orchestrator_key, 'core_chat_v1', 'keys test.toml does not set keep their defaults');
});

t.test('every environment variable the spec names overrides its key', async (t) => {
  const config = load({
    AGENT_SYSTEM_PROMPT_MAX_LENGTH: '123',
    AGENT_JUDGE_PROMPT_MAX_LENGTH: '456',
    MCP_RAW_PASSTHROUGH_WRAP_JSON_CODE_BLOCK: 'true',
    APP_ENV: 'staging',
    RELEASE_PUBLISHED_AT: '2026-01-02',
    RELEASE_COMMIT_SHA: 'abc123',
    RELEASE_COMMIT_SUBJECT: 'subject',
    RELEASE_TAG_NAME: 'v1.2.3',
    RELEASE_TAG_MESSAGE: 'message',
    OBSERVABILITY_RELEASE: 'obs',
    ADMIN_ACCESS_TOKEN_SECRET_KEY: 'k'.repeat(40),
    ADMIN_ACCESS_COOKIE_SECURE: 'true',
    OBJECT_STORE_PUBLIC_ENDPOINT: 'https://files.example.com',
  });
  t.equal(config.agent.system_prompt_max_length, 123);
  t.equal(config.agent.judge_prompt_max_length, 456);
  t.equal(config.mcp.raw_passthrough_wrap_json_code_block, true);
  t.equal(config.app.env, 'staging');
  t.same(config.release, {
    published_at: '2026-01-02',
    commit_sha: 'abc123',
    commit_subject: 'subject',
    tag_name: 'v1.2.3',
    tag_message: 'message',
    observability_release: 'obs',
  });
  t.equal(config.admin.access_token_secret_key, 'k'.repeat(40));
  t.equal(config.admin.access_cookie_secure, true);
  t.equal(config.object_store.public_endpoint, 'https://files.example.com');
});

t.test('AGENT_HOST_PLUGINS_DISABLED is a comma-separated list', async (t) => {
  t.same(load({ AGENT_HOST_PLUGINS_DISABLED: 'a, b,,c' }).plugins.disabled, ['a', 'b', 'c']);
});

t.test('AGENT_HOST__SECTION__KEY overrides any key with a TOML value', async (t) => {
  const config = load({ AGENT_HOST__TIMEOUTS__MODEL_REQUEST_SECONDS: '7.5', AGENT_HOST__PLUGINS__ENABLED: '["x", "./y"]' });
  t.equal(config.timeouts.model_request_seconds, 7.5);
  t.same(config.plugins.enabled, ['x', './y']);
});

t.test('in a plugin section of AGENT_HOST__PLUGINS__<ID>__<KEY>, _ stands for - (shells cannot export hyphens)', async (t) => {
  const config = load({ AGENT_HOST__PLUGINS__MODELS_LANGCHAIN__OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' });
  t.equal((config.plugins['models-langchain'] as Record<string, unknown>).openai_base_url, 'http://127.0.0.1:8000/v1');
  t.notOk('models_langchain' in config.plugins, 'no section under the underscored name');
});

t.test('[plugins] extra adds plugins after the enabled list without restating it', async (t) => {
  const config = load({ AGENT_HOST_PLUGINS_EXTRA: './my-plugin, tools-mcp' });
  t.same(config.plugins.extra, ['./my-plugin', 'tools-mcp']);
  const specifiers = pluginSpecifiers(config);
  t.same(specifiers.slice(0, config.plugins.enabled.length), config.plugins.enabled, 'the defaults stay, in order');
  t.same(specifiers.slice(config.plugins.enabled.length), ['./my-plugin'], 'the extra plugin follows; one already enabled is not listed twice');
});

t.test('[plugins] dir loads every plugin package directly inside it, after enabled and extra', async (t) => {
  const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/plugins');
  const config = load({ AGENT_HOST_PLUGINS_DIR: fixtures, AGENT_HOST_PLUGINS_EXTRA: './my-plugin' });
  t.same(
    pluginSpecifiers(config).slice(config.plugins.enabled.length),
    [
      './my-plugin',
      ...['hello-orchestrator', 'job-counter', 'promise-hooks-probe', 'retriever-drops-point', 'tool-provider-weather'].map((name) =>
        path.join(fixtures, name),
      ),
    ],
    'folders with an agentHost manifest, by name; the kernel fixtures folder has none and is skipped',
  );
  t.throws(
    () => pluginSpecifiers(load({ AGENT_HOST_PLUGINS_DIR: path.join(fixtures, 'missing') })),
    /\[plugins\] dir .*missing \(AGENT_HOST_PLUGINS_DIR\) does not exist/,
  );
});

t.test('invalid values are refused with the key and the reason', async (t) => {
  t.throws(() => load({ AGENT_SYSTEM_PROMPT_MAX_LENGTH: 'lots' }), new ConfigError('AGENT_SYSTEM_PROMPT_MAX_LENGTH must be an integer, got "lots"'));
  t.throws(() => load({ ADMIN_ACCESS_COOKIE_SECURE: 'maybe' }), /ADMIN_ACCESS_COOKIE_SECURE must be true or false/);
  t.throws(() => load({ APP_ENV: 'prod' }), /app\.env: Invalid option/);
  t.throws(() => load({ AGENT_HOST__AGENT__SYSTEM_PROMPT_MAX_LENGTH: '-1' }), /agent\.system_prompt_max_length/);
  t.throws(() => load({ AGENT_HOST__AGENT__SYSTM_PROMPT: '1' }), /agent: Unrecognized key: "systm_prompt"/, 'typos in keys are refused, not ignored');
});

t.test('a broken TOML file is refused with its path', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-config-'));
  await writeFile(path.join(dir, 'default.toml'), '[app\nenv = 1');
  t.throws(() => loadConfig({ configDir: dir, env: {} }), new RegExp(`${dir}/default.toml`));
});

t.test('production refuses start-up without ADMIN_ACCESS_TOKEN_SECRET_KEY and a secure cookie', async (t) => {
  const problems = productionGuardProblems(load({ APP_ENV: 'production' }));
  t.same(problems, [
    'ADMIN_ACCESS_TOKEN_SECRET_KEY must be set when APP_ENV=production',
    'ADMIN_ACCESS_COOKIE_SECURE must be true when APP_ENV=production',
    'AGENT_HOST_SECRETS_KEY must be set when APP_ENV=production',
  ]);
  const ok = load({
    APP_ENV: 'production',
    ADMIN_ACCESS_TOKEN_SECRET_KEY: 'secret',
    ADMIN_ACCESS_COOKIE_SECURE: 'true',
    AGENT_HOST_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
  });
  t.same(productionGuardProblems(ok), []);
});

t.test('docs/configuration.md lists every key and every environment variable', async (t) => {
  const { readFile } = await import('node:fs/promises');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const doc = await readFile(path.join(root, 'docs', 'configuration.md'), 'utf8');
  for (const binding of ENV_BINDINGS) t.match(doc, `\`${binding.env}\``, `${binding.env} is documented`);
  const config = load() as unknown as Record<string, Record<string, unknown>>;
  for (const [section, keys] of Object.entries(config)) {
    t.match(doc, `[${section}]`, `section [${section}] is documented`);
    for (const key of Object.keys(keys)) {
      if (section === 'plugins' && !['enabled', 'disabled'].includes(key)) continue;
      t.match(doc, `\`${section}.${key}\``, `${section}.${key} is documented`);
    }
  }
});
