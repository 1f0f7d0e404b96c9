// Configuration that names what no loaded plugin provides is a warning outside production and a refusal in it
// (a typo in [plugins] disabled, a section of a plugin not loaded, an extension nobody registers).
import { extensionPoints } from '@agent-host/sdk';
import t from 'tap';
import { getJson, startTestHost } from '../helpers/host.js';

t.test('a typo in AGENT_HOST_PLUGINS_DISABLED, a section of an unloaded plugin and an unregistered embedder are warned about', async (t) => {
  const host = await startTestHost(t, {
    env: {
      AGENT_HOST_PLUGINS_DISABLED: 'orchestrator-react,embedders',
      AGENT_HOST__PLUGINS__NOT_LOADED__SETTING: '"x"',
    },
  });
  const problems = host.app.configurationProblems;
  t.match(
    problems.join('\n'),
    /\[plugins\] disabled names "orchestrator-react", which no enabled plugin is: it disables nothing/,
    'the typo disables nothing and says so',
  );
  t.match(problems.join('\n'), /\[plugins\.not-loaded\] configures a plugin that is not loaded/, 'a section for a plugin that is not loaded');
  t.match(
    problems.join('\n'),
    /\[knowledge\] embedder = "feature-hashing", but no enabled plugin registers embedders "feature-hashing"/,
    'disabling embedders leaves [knowledge].embedder pointing at nothing',
  );
  const health = await getJson(host, '/healthz');
  t.equal(health.body.guard_state, 'warning', '/healthz shows them');
  t.ok(health.body.guard_messages.some((m: string) => /disables nothing/.test(m)));
});

t.test('the default configuration has nothing to warn about', async (t) => {
  const host = await startTestHost(t);
  t.same(host.app.configurationProblems, []);
});

t.test("nor with models-openai left out, the documented way back to LangChain's openai provider", async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST_PLUGINS_DISABLED: 'models-openai' } });
  t.same(host.app.configurationProblems, [], 'no section is left for a plugin that is not loaded, so production starts too');
  t.equal(host.app.kernel.registry(extensionPoints.modelProviders).ownerOf('openai'), 'models-langchain', 'LangChain serves openai');
});

t.test('in production the same configuration refuses to start, naming each key', async (t) => {
  const refused = await startTestHost(t, {
    env: {
      APP_ENV: 'production',
      ADMIN_ACCESS_COOKIE_SECURE: 'true',
      AGENT_HOST_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      AGENT_HOST_PLUGINS_DISABLED: 'embedders',
    },
  }).then(
    () => undefined,
    (error: Error) => error,
  );
  t.match(refused?.message, /configuration refers to what no loaded plugin provides: \[knowledge\] embedder = "feature-hashing"/);
});
