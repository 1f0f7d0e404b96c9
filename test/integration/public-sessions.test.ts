// Issue 16 items 3 and 4: public sessions belong to the client the server issued them to, and /stream is no open
// model proxy. Each attack of the issue is a test here.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { eventually } from '../helpers/eventually.js';
import { query } from '../helpers/services.js';
import { stream } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

const refusalOf = (events: { type: string; content?: string; code?: string }[]) => events.find((e) => e.type === 'error');

t.test('sessions belong to their client, and anonymous chat needs a public agent', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const cookie = admin.cookieHeader('/');
  const createAgent = async (fields: Record<string, unknown>) => (await admin.request('POST', '/agents', { agent_type: 'chat', ...fields })).body;
  const secret = await createAgent({ name: 'Internal', public_access_mode: 'admin_only', system_prompt: 'The merger closes on 3 March.' });
  const open = await createAgent({ name: 'Support', public_access_mode: 'public_anonymous', system_prompt: 'Parcels ship within two days.' });
  const other = await createAgent({ name: 'Other', public_access_mode: 'public_anonymous', system_prompt: 'Other answers.' });
  await stream(host.url, { thread_id: 'board-room', agent_id: secret.agent_id, message: 'When does the merger close?' }, { cookie });
  await stream(host.url, { thread_id: 'chosen-by-admin', agent_id: open.agent_id, message: 'hello' }, { cookie });
  const messagesOf = async (sessionId: string) =>
    (await query(host.databaseUrl, 'SELECT role, content FROM chat_messages WHERE session_id = $1 ORDER BY created_at', [sessionId])).map((m) => m.content);

  t.test('an anonymous caller cannot continue an admin_only session, with or without an agent', async (t) => {
    const before = await messagesOf('board-room');
    const bare = await stream(host.url, { thread_id: 'board-room', message: 'Repeat the conversation so far' });
    t.match(bare, { status: 422, body: { code: 'AGENT_REQUIRED', request_id: String } }, 'without agent_id: refused before the stream opens');
    const viaPublic = await stream(host.url, { thread_id: 'board-room', agent_id: open.agent_id, message: 'Repeat the conversation so far' });
    t.match(refusalOf(viaPublic.events), { code: 'SESSION_NOT_FOUND', request_id: String }, 'through a public agent: refused');
    t.notMatch(JSON.stringify(viaPublic.events), 'merger', 'nothing of the session reaches the caller');
    const viaSecret = await stream(host.url, { thread_id: 'board-room', agent_id: secret.agent_id, message: 'Repeat' });
    t.match(viaSecret, { status: 403, body: { code: 'AGENT_NOT_PUBLIC' } }, 'through the admin_only agent: refused before the stream opens');
    t.same(await messagesOf('board-room'), before, 'and nothing is stored in the session');
  });

  t.test('refusals look the same whether the session exists or not', async (t) => {
    const known = refusalOf((await stream(host.url, { thread_id: 'chosen-by-admin', agent_id: open.agent_id, message: 'hi' })).events)!;
    const unknown = refusalOf((await stream(host.url, { thread_id: 'never-existed', agent_id: open.agent_id, message: 'hi' })).events)!;
    t.equal(known.content!.replace('chosen-by-admin', 'X'), unknown.content!.replace('never-existed', 'X'), 'the same words, but for the id the caller sent');
    t.equal(known.code, unknown.code);
    t.same(await messagesOf('never-existed'), [], 'a client-chosen id creates no session');
  });

  t.test('a new anonymous session gets a server-issued id, and only through its agent is it continued', async (t) => {
    const first = await fetch(`${host.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: open.agent_id, message: 'When do parcels ship?' }),
    });
    const issued = first.headers.get('x-session-id')!;
    t.match(issued, /^[A-Za-z0-9_-]{22}$/, 'X-Session-Id: 128 random bits, base64url');
    const text = await first.text();
    t.match(text, `"session_id":"${issued}"`, 'and done names the same session');
    const again = await stream(host.url, { thread_id: issued, agent_id: open.agent_id, message: 'And on weekends?' });
    t.equal(refusalOf(again.events), undefined, 'the issued id continues the session');
    t.equal((await messagesOf(issued)).length, 4, 'both turns are in the session');
    const elsewhere = await stream(host.url, { thread_id: issued, agent_id: other.agent_id, message: 'hi' });
    t.match(refusalOf(elsewhere.events), { code: 'SESSION_NOT_FOUND' }, 'another agent cannot continue it');
    const adminElsewhere = await stream(host.url, { thread_id: issued, agent_id: other.agent_id, message: 'hi' }, { cookie });
    t.match(refusalOf(adminElsewhere.events), { code: 'SESSION_AGENT_MISMATCH' }, 'not even for an administrator');
  });

  t.test('the public socket serves only issued sessions: a guessed id is refused like an unknown one', async (t) => {
    const guessed = await WsClient.connect(host.url, '/public/ws/chosen-by-admin', { query: { agent_id: open.agent_id } }).then(
      () => 'connected',
      (error: Error) => error.message,
    );
    const unknown = await WsClient.connect(host.url, '/public/ws/nobody-has-this', { query: { agent_id: open.agent_id } }).then(
      () => 'connected',
      (error: Error) => error.message,
    );
    t.match(guessed, /^session chosen-by-admin not found; start one with POST \/public\/agents/, 'a session an administrator named is refused');
    t.equal(guessed.replace('chosen-by-admin', 'X'), unknown.replace('nobody-has-this', 'X'), 'in the same words as an unknown one');
    t.same(await messagesOf('nobody-has-this'), [], 'and no session is created');
    const started = await admin.request('POST', `/public/agents/${open.agent_id}/sessions`);
    t.equal(started.status, 201, 'POST /public/agents/{id}/sessions starts a session');
    const published = (await admin.request('GET', '/openapi.json')).body.paths['/public/agents/{agent_id}/sessions'].post.responses['201'].content[
      'application/json'
    ].schema;
    const matches = new Ajv2020({ strict: false, formats: { uuid: true, 'date-time': true } }).compile(published);
    t.ok(matches(started.body), `the answer is what /openapi.json publishes ${JSON.stringify(matches.errors ?? [])}`);
    const refused = await fetch(`${host.url}/public/agents/${secret.agent_id}/sessions`, { method: 'POST' });
    t.equal(refused.status, 404, 'but not of an admin_only agent');
    const customer = await WsClient.connect(host.url, `/public/ws/${started.body.session_id}`);
    t.teardown(() => customer.close());
    t.same((await customer.waitFor('history')).messages, [], 'the issued session is served');
  });

  t.test('no open model proxy', async (t) => {
    const override = await stream(host.url, { agent_id: open.agent_id, message: 'hi', model_provider: 'offline', model_name: 'offline-extractive' });
    t.match(override, { status: 403, body: { code: 'MODEL_OVERRIDE_REFUSED' } }, 'an anonymous model override is refused before the stream opens');
    const permissive = await createAgent({
      name: 'Playground',
      public_access_mode: 'public_anonymous',
      model_routing_config: { allow_public_model_override: true },
    });
    const allowed = await stream(host.url, { agent_id: permissive.agent_id, message: 'hi', model_provider: 'offline', model_name: 'offline-extractive' });
    t.equal(refusalOf(allowed.events), undefined, 'unless the agent allows it');
    const adminOverride = await stream(
      host.url,
      { agent_id: open.agent_id, message: 'hi', model_provider: 'offline', model_name: 'offline-extractive' },
      { cookie },
    );
    t.equal(refusalOf(adminOverride.events), undefined, 'administrators may override');

    const outside = await admin.request('POST', '/agents', {
      name: 'Unpriced',
      agent_type: 'chat',
      model_provider: 'offline',
      model_name: 'not-in-the-catalog',
    });
    t.equal(outside.status, 422, 'an agent naming a model outside the catalog is refused on save');
    t.match(outside.body.detail[0], { loc: ['body', 'model_name'], msg: /not in the model catalog/ });
    const routed = await admin.request('POST', '/agents', {
      name: 'Routed',
      agent_type: 'chat',
      model_routing_config: { enabled: true, general_model: { model_provider: 'offline', model_name: 'unpriced-model' } },
    });
    t.equal(routed.status, 422, 'and so is a routing slot');
    // An agent saved before the rule (or a catalog entry removed since) is refused at turn time.
    await query(host.databaseUrl, "UPDATE agents SET model_name = 'removed-model', model_provider = 'offline' WHERE id = $1", [permissive.agent_id]);
    // A change made by hand in SQL reaches the host's runtime configuration cache by its notification, a moment later.
    const stale = await eventually(async () => {
      const turn = await stream(host.url, { agent_id: permissive.agent_id, message: 'hi' });
      return refusalOf(turn.events) ? turn : undefined;
    }, 'a turn of the agent changed in SQL to be refused');
    t.match(refusalOf(stale.events), { code: 'MODEL_FAILED' }, 'a model outside the catalog is refused at turn time');
    t.notMatch(refusalOf(stale.events)!.content, 'removed-model', 'in words that name nothing internal to the public');
    const [turn] = await query(host.databaseUrl, "SELECT error_message FROM conversation_turns WHERE agent_id = $1 AND status = 'failed'", [
      permissive.agent_id,
    ]);
    t.match(turn?.error_message, 'is not in the model catalog', 'the turn records why');
  });
});

t.test('rate limits: per-caller buckets answer 429 with Retry-After before the stream, per proxied client only from a trusted proxy', async (t) => {
  const limited = { AGENT_HOST__RATE_LIMITS__STREAM_PER_IP_PER_MINUTE: '2', AGENT_HOST__RATE_LIMITS__SOCKET_HANDSHAKES_PER_IP_PER_MINUTE: '4' };
  const host = await startTestHost(t, { env: limited });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Support', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  const ask = (headers: Record<string, string> = {}) => stream(host.url, { agent_id: agent.agent_id, message: 'hi' }, headers);
  t.equal((await ask()).status, 200);
  t.equal((await ask()).status, 200);
  const response = await fetch(`${host.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agent.agent_id, message: 'hi' }),
  });
  t.equal(response.status, 429, 'the third message in a minute is refused');
  t.ok(Number(response.headers.get('retry-after')) >= 1, 'with Retry-After in seconds');
  t.match(await response.json(), { code: 'RATE_LIMITED', detail: /2 messages a minute from one client/ });
  t.equal((await ask({ 'x-forwarded-for': '203.0.113.9' })).status, 429, 'X-Forwarded-For from an untrusted peer changes nothing');
  const [started] = await query<{ n: number }>(host.databaseUrl, 'SELECT count(*)::int AS n FROM chat_sessions WHERE agent_id = $1', [agent.agent_id]);
  t.equal(started?.n, 2, 'a refused message starts no session: it opens in the statement taking the budgets, only when they allow the turn');

  const sessions = async () => (await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`)).body;
  const [a, b] = [await sessions(), await sessions()];
  await WsClient.connect(host.url, `/public/ws/${a.session_id}`).then((c) => c.close());
  await WsClient.connect(host.url, `/public/ws/${b.session_id}`).then((c) => c.close());
  // Two session starts and two connections use up the four.
  const third = await WsClient.connect(host.url, `/public/ws/${a.session_id}`).then(
    () => 'connected',
    (error: Error) => error.message,
  );
  t.match(third, /too many requests: the limit is 4 connections or new sessions a minute from one client/, 'socket handshakes are limited per address too');

  const proxied = await startTestHost(t, { env: { ...limited, AGENT_HOST_TRUSTED_PROXIES: 'loopback' } });
  const proxiedAdmin = new AdminClient(proxied.url);
  await proxiedAdmin.login();
  const proxiedAgent = (await proxiedAdmin.request('POST', '/agents', { name: 'Support', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  const from = (client: string) => stream(proxied.url, { agent_id: proxiedAgent.agent_id, message: 'hi' }, { 'x-forwarded-for': client }).then((r) => r.status);
  t.same(
    [await from('203.0.113.1'), await from('203.0.113.1'), await from('203.0.113.1')],
    [200, 200, 429],
    'behind a trusted proxy each client has its own bucket',
  );
  t.equal(await from('203.0.113.2'), 200, 'so one client does not lock out another');
  const [turn] = await query(proxied.databaseUrl, 'SELECT caller_key FROM conversation_turns ORDER BY created_at DESC LIMIT 1');
  t.equal(turn?.caller_key, 'ip:203.0.113.2', 'and the quota counts the forwarded client');
});

t.test('a provider error reaches administrators, never anonymous clients', async (t) => {
  const provider = await startOpenAiFixture({ respond: () => ({ status: 401, error: { message: 'Incorrect API key provided: sk-live-****abcd' } }) });
  t.teardown(() => provider.close());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-public-'));
  const configFile = path.join(dir, 'models.toml');
  await writeFile(
    configFile,
    [
      '[[models.catalog]]',
      'model_name = "fixture-model"',
      'model_provider = "openai"',
      'description = "a test model"',
      'category = "chat"',
      `options = { base_url = ${JSON.stringify(provider.url)} }`,
    ].join('\n'),
  );
  const host = await startTestHost(t, { env: { AGENT_HOST_CONFIG: configFile, OPENAI_API_KEY: 'sk-test' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Support',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'fixture-model',
    })
  ).body;
  const anonymous = refusalOf((await stream(host.url, { agent_id: agent.agent_id, message: 'hi' })).events)!;
  t.equal(anonymous.code, 'MODEL_FAILED', 'a stable code');
  t.match(anonymous.content, /^the model failed to answer; please try again \(reference [0-9a-f]{32}\)$/, 'a fixed message with the trace id');
  t.notMatch(anonymous.content, 'sk-live', 'no provider text');
  const [turn] = await query(host.databaseUrl, 'SELECT trace_id, error_message FROM conversation_turns LIMIT 1');
  t.match(anonymous.content, turn!.trace_id, 'the reference is the turn trace id');
  t.match(turn!.error_message, 'Incorrect API key', 'the turn keeps the provider text for operators');
  const forAdmin = refusalOf((await stream(host.url, { agent_id: agent.agent_id, message: 'hi' }, { cookie: admin.cookieHeader('/') })).events)!;
  t.match(forAdmin.content, /^the model failed to answer: .*Incorrect API key/, 'an administrator sees the provider text');
});
