// Issue 25 item 2: chat turns read their agent and its mounts from a cache (core/src/db/runtime-config-cache.ts) that
// every change clears, on every instance: the instance that made it at once, the others when Postgres notifies them.
import pg from 'pg';
import t from 'tap';
import { RuntimeConfigCache } from '../../core/src/db/runtime-config-cache.js';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { stream } from '../helpers/sse.js';

const LISTENER = 'agent-host runtime config';
const quietLogger = { warn: () => undefined, info: () => undefined } as never;

t.test('the cache itself: frozen values, nothing kept from a failed or overtaken load, bypassed until it listens', async (t) => {
  const fixture = await startOpenAiFixture();
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const cache = new RuntimeConfigCache();
  t.teardown(() => cache.close());
  let loads = 0;
  const load = async () => ({ n: ++loads, nested: { list: [1] } });

  await cache.read('k', load);
  await cache.read('k', load);
  t.equal(loads, 2, 'not listening yet: every read loads');

  await cache.listen(host.databaseUrl, quietLogger);
  t.ok(cache.listening, 'listening once every runtime config table has its change trigger');
  const first = await cache.read('k', load);
  t.equal((await cache.read('k', load)).n, first.n, 'a second read is served from the cache');
  t.throws(() => {
    (first.nested.list as number[]).push(2);
  }, 'a cached value is frozen, nested values too');

  await t.rejects(
    cache.read('bad', () => Promise.reject(new Error('no such agent'))),
    /no such agent/,
  );
  t.equal((await cache.read('bad', load)).n, loads, 'a failed load is not kept');

  let release!: () => void;
  const slow = cache.read('slow', () => new Promise<{ n: number }>((resolve) => (release = () => resolve({ n: -1 }))));
  cache.invalidate();
  release();
  t.equal((await slow).n, -1, 'a load overtaken by a change still answers its caller');
  t.not((await cache.read('slow', load)).n, -1, 'but is not kept for the next');

  const db = new pg.Client({ connectionString: host.databaseUrl });
  await db.connect();
  t.teardown(() => db.end());
  const before = (await cache.read('k', load)).n;
  await db.query('UPDATE agents SET description = description WHERE false');
  await eventually(async () => ((await cache.read('k', load)).n !== before ? true : undefined), 'the notification');
  t.pass('a statement on a runtime config table, from anywhere, clears it');
});

t.test('a change is used by the next turn on the instance that made it, and soon on every other', async (t) => {
  // The model answers with the system prompt it was given: each reply says which agent version ran.
  const fixture = await startOpenAiFixture({
    respond: (body) => ({ content: String(body.messages.find((m: { role: string }) => m.role === 'system')?.content ?? 'none').split('\n')[0] }),
  });
  t.teardown(() => fixture.close());
  const env = {
    'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`,
    AGENT_HOST__RATE_LIMITS__STREAM_PER_IP_PER_MINUTE: '0',
    AGENT_HOST__RATE_LIMITS__ANONYMOUS_PER_MINUTE: '0',
    AGENT_HOST__AGENT__PER_CALLER_DAILY_REQUESTS: '0',
  };
  const a = await startTestHost(t, { env });
  const b = await startTestHost(t, { env, databaseUrl: a.databaseUrl });
  const admin = new AdminClient(a.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Versioned',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      system_prompt: 'version 1',
    })
  ).body;
  const reply = async (url: string) => {
    const { events } = await stream(url, { agent_id: agent.agent_id, message: 'Which version are you?' });
    return events
      .filter((e) => e.type === 'token')
      .map((e) => e.content)
      .join('');
  };
  t.same([await reply(a.url), await reply(b.url)], ['version 1', 'version 1'], 'both instances have the agent cached');

  await admin.request('PATCH', `/agents/${agent.agent_id}`, { system_prompt: 'version 2' });
  t.equal(await reply(a.url), 'version 2', 'the instance that changed the agent uses the change in its next turn');
  await eventually(async () => ((await reply(b.url)) === 'version 2' ? true : undefined), 'the other instance to use version 2');
  t.pass('the other instance hears of it');

  t.test('64 turns in flight while the agent changes: every turn that starts after the change uses it', async (t) => {
    let answered = 0;
    let inFlight!: () => void;
    const gate = new Promise<void>((resolve) => (inFlight = resolve));
    fixture.setRespond(async (body) => {
      if (++answered === 64) inFlight();
      await gate;
      return { content: String(body.messages.find((m: { role: string }) => m.role === 'system')?.content).split('\n')[0] };
    });
    const before = Array.from({ length: 64 }, () => reply(a.url));
    await Promise.race([gate, new Promise((_, reject) => setTimeout(() => reject(new Error('64 turns did not reach the model')), 30_000))]);
    await admin.request('PATCH', `/agents/${agent.agent_id}`, { system_prompt: 'version 3' });
    const after = Array.from({ length: 64 }, () => reply(a.url));
    t.same(new Set(await Promise.all(before)), new Set(['version 2']), 'the turns admitted before the change ran the version they started with');
    t.same(new Set(await Promise.all(after)), new Set(['version 3']), 'every turn admitted after it ran the new version');
  });

  t.test('a change made in SQL, and a lost listener, leave no instance stale', async (t) => {
    fixture.setRespond((body) => ({ content: String(body.messages.find((m: { role: string }) => m.role === 'system')?.content).split('\n')[0] }));
    const db = new pg.Client({ connectionString: a.databaseUrl });
    await db.connect();
    t.teardown(() => db.end());
    await db.query('UPDATE agents SET system_prompt = $2 WHERE id = $1', [agent.agent_id, 'version 4']);
    const both = async (version: string) =>
      eventually(async () => ((await reply(a.url)) === version && (await reply(b.url)) === version ? true : undefined), `both instances to use ${version}`);
    await both('version 4');
    t.pass('a change by hand reaches both');

    const listeners = async () =>
      (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = '${LISTENER}' AND datname = current_database()`)).rows.map(
        (r) => r.pid,
      );
    const lost = await listeners();
    t.equal(lost.length, 2, 'one listener per instance');
    await db.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [lost]);
    // Made while nobody listens (each instance waits before it reconnects): no notification reaches anyone.
    await db.query('UPDATE agents SET system_prompt = $2 WHERE id = $1', [agent.agent_id, 'version 5']);
    await eventually(async () => {
      const back = await listeners();
      return back.length === 2 && back.every((pid) => !lost.includes(pid)) ? true : undefined;
    }, 'both listeners to reconnect');
    t.same([await reply(a.url), await reply(b.url)], ['version 5', 'version 5'], 'a listener that reconnects starts with an empty cache');
    await db.query('UPDATE agents SET system_prompt = $2 WHERE id = $1', [agent.agent_id, 'version 6']);
    await both('version 6');
    t.pass('and hear changes again');
  });
});
