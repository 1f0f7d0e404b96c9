import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { stream } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

t.test('WebSocket rooms and human takeover (spec 3.1, 4.3)', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const createAgent = async (fields: Record<string, unknown>) => (await admin.request('POST', '/agents', { agent_type: 'chat', ...fields })).body;
  const agent = await createAgent({
    name: 'Support',
    public_access_mode: 'public_anonymous',
    human_takeover_enabled: true,
    system_prompt: 'Parcels ship within two days.',
    message_type_response_config: { form: { enabled: true, response_text: 'Form received.', message_key_responses: [{ message_key: 'Opening Hours', response_text: 'We are open 9 to 5.' }] } },
  });
  const noTakeover = await createAgent({ name: 'No takeover', public_access_mode: 'public_anonymous' });
  const internal = await createAgent({ name: 'Internal', public_access_mode: 'admin_only', human_takeover_enabled: true });
  const sockets: WsClient[] = [];
  t.teardown(() => sockets.forEach((s) => s.close()));
  const connect = async (namespace: string, options: Parameters<typeof WsClient.connect>[2] = {}) => {
    const client = await WsClient.connect(host.url, namespace, options);
    sockets.push(client);
    return client;
  };
  const operator = (sessionId: string, operatorId: string, client = admin) =>
    connect(`/ws/${sessionId}`, { cookie: client.cookieHeader(), query: { role: 'operator', operator_id: operatorId, operator_name: `Operator ${operatorId}` } });
  const turnsOf = async (sessionId: string) => (await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM conversation_turns WHERE session_id = $1', [sessionId]))[0]!.n;

  t.test('on connect the server sends history, then session', async (t) => {
    await stream(host.url, { thread_id: 'ws-connect', agent_id: agent.agent_id, message: 'When do parcels ship?' });
    const customer = await connect('/public/ws/ws-connect', { query: { agent_id: agent.agent_id } });
    const session = await customer.waitFor('session');
    t.same(customer.received.slice(0, 2).map((r) => r.type), ['history', 'session'], 'history first, then session');
    const history = customer.of('history')[0];
    t.same(history.messages.map((m: any) => m.role), ['user', 'assistant']);
    t.equal(history.messages[1].content, 'Parcels ship within two days.');
    t.match(session, { type: 'session', session_id: 'ws-connect', status: 'AI_ACTIVE', agent_id: agent.agent_id, human_takeover_enabled: true, takeover_owner_id: null });
  });

  t.test('a customer message runs the /stream pipeline and both messages reach the room', async (t) => {
    const customer = await connect('/public/ws/ws-chat', { query: { agent_id: agent.agent_id } });
    const watcher = await operator('ws-chat', 'op-watch');
    t.same(await customer.send('user_message', { content: 'When do parcels ship?' }), { ok: true });
    const reply = await watcher.waitFor('message', (m) => m.message.role === 'assistant');
    t.equal(reply.message.content, 'Parcels ship within two days.');
    const user = await customer.waitFor('message', (m) => m.message.role === 'user');
    t.equal(user.message.content, 'When do parcels ship?');
    t.equal(await turnsOf('ws-chat'), 1, 'one turn, as for POST /stream');
    t.same(await customer.send('message', { event: '', content: 'An empty event with content is a user message' }), { ok: true });
    await customer.waitFor('message', (m) => m.message.content === 'An empty event with content is a user message');
    t.equal(await turnsOf('ws-chat'), 2);
    t.match(await customer.send('message', { event: 'dance' }), { ok: false, detail: /unknown event "dance"/ });
    t.match(await customer.send('user_message', { content: '   ' }), { ok: false, detail: /message is empty/ }, 'the pipeline refusals come back as errors');
    t.match(customer.of('error').at(-1), { type: 'error', detail: /message is empty/ });
  });

  t.test('a [message_type=...] tag is parsed first; a fixed-response hit calls no model and writes no override', async (t) => {
    const customer = await connect('/public/ws/ws-tag', { query: { agent_id: agent.agent_id } });
    t.same(await customer.send('user_message', { content: '[message_type=form]\n  opening hours ', model_provider: 'offline', model_name: 'offline-extractive' }), { ok: true });
    const reply = await customer.waitFor('message', (m) => m.message.role === 'assistant');
    t.equal(reply.message.content, 'We are open 9 to 5.');
    const user = await customer.waitFor('message', (m) => m.message.role === 'user');
    t.equal(user.message.content, '  opening hours ', 'the body after the tag is the stored message');
    const [turn] = await query(host.databaseUrl, 'SELECT response_source, message_type, token_usage_source FROM conversation_turns WHERE session_id = $1', ['ws-tag']);
    t.same(turn, { response_source: 'fixed_response', message_type: 'form', token_usage_source: 'no_model_invocation' });
    const [session] = await query(host.databaseUrl, 'SELECT model_provider FROM chat_sessions WHERE id = $1', ['ws-tag']);
    t.equal(session!.model_provider, null, 'no model override is written on the fixed-response path');
    await customer.send('user_message', { content: '[message_type=rule] no newline, so no tag' });
    const [plain] = await query(host.databaseUrl, "SELECT message_type FROM conversation_turns WHERE session_id = $1 ORDER BY created_at DESC LIMIT 1", ['ws-tag']);
    t.equal(plain!.message_type, 'user_chat', 'a tag without its newline is plain text');
  });

  t.test('takeover, customer messages during HUMAN_ACTIVE, manual replies, release: every row of 3.1', async (t) => {
    const customer = await connect('/public/ws/ws-takeover', { query: { agent_id: agent.agent_id } });
    const alice = await operator('ws-takeover', 'alice');
    await customer.waitFor('session');

    t.same(await alice.send('agent_takeover'), { ok: true }, 'AI_ACTIVE -> HUMAN_ACTIVE by WS agent_takeover');
    const state = await customer.waitFor('session', (s) => s.status === 'HUMAN_ACTIVE');
    t.match(state, { takeover_owner_id: 'alice', takeover_owner_name: 'Operator alice', takeover_released_at: null });
    t.ok(state.takeover_started_at, 'takeover_started_at is set');
    t.match(await customer.waitFor('system'), { status: 'HUMAN_ACTIVE', event_type: 'takeover', message: { role: 'system', metadata: { status: 'HUMAN_ACTIVE' } } });
    t.match(await customer.waitFor('takeover_event'), { event: { event_type: 'takeover', operator_id: 'alice', channel: 'websocket' } });

    t.same(await customer.send('user_message', { content: 'Is anyone there?' }), { ok: true });
    await alice.waitFor('message', (m) => m.message.content === 'Is anyone there?');
    const viaStream = await stream(host.url, { thread_id: 'ws-takeover', agent_id: agent.agent_id, message: 'Hello from /stream' });
    t.same(viaStream.events, [{ type: 'done' }], '/stream during HUMAN_ACTIVE: the message is taken, no reply');
    await alice.waitFor('message', (m) => m.message.content === 'Hello from /stream');
    t.equal(await turnsOf('ws-takeover'), 0, 'no conversation turn while a human answers');
    t.notOk(customer.of('message').some((m) => m.message.role === 'assistant'), 'the AI does not reply');

    t.same(await alice.send('user_message', { content: 'Alice here, how can I help?' }), { ok: true }, 'the owner replies by hand over WS');
    const manual = await customer.waitFor('message', (m) => m.message.role === 'agent');
    t.match(manual.message, { content: 'Alice here, how can I help?', sender_id_snapshot: 'alice', sender_name_snapshot: 'Operator alice' });
    const rest = await admin.request('POST', '/sessions/ws-takeover/manual-messages', { content: 'From REST' });
    t.equal(rest.status, 409, 'REST manual messages need the active owner (the REST operator is the administrator)');
    t.equal(await turnsOf('ws-takeover'), 0, 'manual messages create no turn');

    const bob = await operator('ws-takeover', 'bob');
    t.match(await bob.send('user_message', { content: 'Bob butting in' }), { ok: false, detail: /only the operator who took over/ });
    t.match(await bob.send('agent_release'), { ok: false, detail: /only the owner releases it/ });
    t.match(await bob.send('agent_takeover'), { ok: false, detail: /already taken over by Operator alice; send force=true/ });
    t.same(await bob.send('agent_takeover', { force: true }), { ok: true }, 'force=true takes it from another operator');
    t.match(await customer.waitFor('takeover_event', (e) => e.event.event_type === 'force_takeover'), { event: { operator_id: 'bob', previous_owner_id: 'alice' } });

    t.same(await bob.send('agent_release'), { ok: true }, 'HUMAN_ACTIVE -> AI_ACTIVE by the owner');
    const released = await customer.waitFor('session', (s) => s.status === 'AI_ACTIVE' && s.takeover_started_at !== null);
    t.match(released, { takeover_owner_id: null });
    t.ok(released.takeover_released_at, 'takeover_released_at is set');
    await customer.waitFor('system', (s) => s.status === 'AI_ACTIVE' && s.event_type === 'release');

    await customer.send('user_message', { content: 'When do parcels ship?' });
    await customer.waitFor('message', (m) => m.message.role === 'assistant' && m.message.content === 'Parcels ship within two days.');
    t.equal(await turnsOf('ws-takeover'), 1, 'the AI answers again after release');

    const events = await admin.request('GET', '/sessions/ws-takeover/takeover-events');
    t.same(events.body.items.map((e: any) => e.event_type), ['takeover', 'manual_message', 'force_takeover', 'release'], 'the durable event stream');
    const messages = await admin.request('GET', '/sessions/ws-takeover/messages?limit=200');
    t.same(messages.body.items.filter((m: any) => m.role === 'system').map((m: any) => m.metadata.status), ['HUMAN_ACTIVE', 'HUMAN_ACTIVE', 'AI_ACTIVE'], 'one extra system message per transition');
    const audits = await query(host.databaseUrl, "SELECT action FROM admin_action_audits WHERE target_id = $1 ORDER BY id", ['ws-takeover']);
    t.same(audits.map((a) => a.action), ['session.takeover', 'session.manual_message', 'session.force_takeover', 'session.release'], 'each transition is audited');
  });

  t.test('takeover over REST: the administrator is the operator; list items show the owner', async (t) => {
    await stream(host.url, { thread_id: 'rest-takeover', agent_id: agent.agent_id, message: 'hi' });
    const customer = await connect('/public/ws/rest-takeover');
    await customer.waitFor('session');
    const taken = await admin.request('POST', '/sessions/rest-takeover/takeover', {});
    t.equal(taken.status, 200);
    t.match(taken.body, { status: 'HUMAN_ACTIVE', takeover_owner_name: 'root-admin' });
    await customer.waitFor('system', (s) => s.status === 'HUMAN_ACTIVE');
    const manual = await admin.request('POST', '/sessions/rest-takeover/manual-messages', { content: 'Typed in the console' });
    t.equal(manual.status, 201);
    t.match(manual.body, { role: 'agent', sender_name_snapshot: 'root-admin' });
    await customer.waitFor('message', (m) => m.message.content === 'Typed in the console');
    const list = await admin.request('GET', `/sessions?q=rest-takeover`);
    t.match(list.body.items[0], { session_id: 'rest-takeover', agent_name: 'Support', human_takeover_enabled: true, status: 'HUMAN_ACTIVE', takeover_owner_name: 'root-admin', takeover_released_at: null });
    t.ok(list.body.items[0].takeover_started_at);
    t.equal((await admin.request('POST', '/sessions/rest-takeover/takeover?force=false', {})).status, 200, 'taking over again as the owner changes nothing');
    t.equal((await admin.request('POST', '/sessions/rest-takeover/release', {})).status, 200);
    t.equal((await admin.request('POST', '/sessions/rest-takeover/release', {})).status, 409, 'nothing to release');
    t.equal((await admin.request('POST', '/sessions/rest-takeover/manual-messages', { content: 'late' })).status, 409, 'no manual messages after release');
    t.equal((await admin.request('POST', '/sessions/no-such-session/takeover', {})).status, 404);
  });

  t.test('only chat agents with human_takeover_enabled can be taken over', async (t) => {
    await stream(host.url, { thread_id: 'no-takeover', agent_id: noTakeover.agent_id, message: 'hi' });
    const refused = await admin.request('POST', '/sessions/no-takeover/takeover', { force: true });
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /without human takeover/);
    const ws = await operator('no-takeover', 'carol');
    t.match(await ws.send('agent_takeover'), { ok: false, detail: /without human takeover/ });
  });

  t.test('two operators taking over at the same moment without force: exactly one wins', async (t) => {
    await stream(host.url, { thread_id: 'race', agent_id: agent.agent_id, message: 'hi' });
    const racers = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((id) => operator('race', id)));
    for (let round = 0; round < 5; round++) {
      const acks = await Promise.all(racers.map((r) => r.send('agent_takeover')));
      t.equal(acks.filter((a) => a.ok).length, 1, `round ${round}: one winner`);
      const [session] = await query(host.databaseUrl, 'SELECT takeover_owner_id FROM chat_sessions WHERE id = $1', ['race']);
      const winner = racers[acks.findIndex((a) => a.ok)]!;
      t.equal(session!.takeover_owner_id, ['r1', 'r2', 'r3', 'r4'][racers.indexOf(winner)], 'the winner owns the session');
      t.same(await winner.send('agent_release'), { ok: true });
    }
    const [{ n }] = (await query(host.databaseUrl, "SELECT count(*)::int AS n FROM session_takeover_events WHERE session_id = 'race' AND event_type = 'takeover'")) as [{ n: number }];
    t.equal(n, 5, 'one takeover event per round');
  });

  t.test('the public namespace: customers only, public agents only', async (t) => {
    await t.rejects(connect('/public/ws/pub-1', { query: { agent_id: agent.agent_id, role: 'operator', operator_id: 'x' } }), /serves customers only/);
    await t.rejects(connect('/public/ws/pub-2', { query: { agent_id: internal.agent_id } }), /is not public/);
    await t.rejects(connect('/public/ws/pub-3'), /not found; pass agent_id/);
    await stream(host.url, { thread_id: 'pub-internal', agent_id: internal.agent_id, message: 'hi' }, { cookie: admin.cookieHeader() });
    await t.rejects(connect('/public/ws/pub-internal', { query: { agent_id: agent.agent_id } }), /is not public/, 'the session keeps its non-public agent');
    const customer = await connect('/public/ws/pub-4', { query: { agent_id: agent.agent_id } });
    t.match(await customer.send('agent_takeover'), { ok: false, detail: /public WebSocket cannot take over/ });
    t.match(await customer.send('agent_release'), { ok: false, detail: /public WebSocket cannot take over/ });
  });

  t.test('the administrator namespace needs a live login with conversations.read; operators need operator_id', async (t) => {
    await t.rejects(connect('/ws/ws-connect'), /administrator login required/);
    await t.rejects(connect('/ws/ws-connect', { cookie: 'agent_host_access=forged' }), /expired or revoked/);
    await t.rejects(connect('/ws/unknown-session', { cookie: admin.cookieHeader() }), /not found/);
    const anonymousOperator = await connect('/ws/ws-connect', { cookie: admin.cookieHeader(), query: { role: 'operator' } });
    t.match(await anonymousOperator.send('agent_takeover'), { ok: false, detail: /operator_id is required/ });
    const customerRole = await connect('/ws/ws-connect', { cookie: admin.cookieHeader() });
    t.match(await customerRole.send('agent_takeover'), { ok: false, detail: /role=operator/ });
  });

  t.test('history holds at most the latest 200 messages', async (t) => {
    await stream(host.url, { thread_id: 'long', agent_id: agent.agent_id, message: 'first' });
    await query(
      host.databaseUrl,
      "INSERT INTO chat_messages (id, session_id, role, content, created_at) SELECT gen_random_uuid(), 'long', 'user', 'm' || i, now() + i * interval '1 ms' FROM generate_series(1, 250) i",
    );
    const customer = await connect('/public/ws/long');
    const history = await customer.waitFor('history');
    t.equal(history.messages.length, 200);
    t.equal(history.messages[0].content, 'm51', 'the oldest kept is the 200th newest');
    t.equal(history.messages.at(-1).content, 'm250', 'oldest first, newest last');
  });

  t.test('after logout an administrator socket is told why and closed; nothing more is sent or accepted', async (t) => {
    const other = new AdminClient(host.url);
    await other.login();
    await stream(host.url, { thread_id: 'revoke', agent_id: agent.agent_id, message: 'hi' });
    const watcher = await connect('/ws/revoke', { cookie: other.cookieHeader(), query: { role: 'operator', operator_id: 'dave' } });
    const customer = await connect('/public/ws/revoke');
    await watcher.waitFor('session');
    t.equal((await other.request('POST', '/admin/auth/logout')).status, 200);
    await customer.send('user_message', { content: 'after logout' });
    await customer.waitFor('message', (m) => m.message.role === 'assistant');
    t.match(await watcher.waitFor('error'), { detail: /session ended/, code: 'session_revoked' });
    await watcher.waitFor('disconnect');
    t.notOk(watcher.of('message').some((m) => m.message.content === 'after logout'), 'the revoked socket got no message after logout');

    const second = new AdminClient(host.url);
    await second.login();
    const writer = await connect('/ws/revoke', { cookie: second.cookieHeader(), query: { role: 'operator', operator_id: 'erin' } });
    await writer.waitFor('session');
    await query(host.databaseUrl, 'UPDATE admin_sessions SET revoked_at = now() WHERE revoked_at IS NULL AND id IN (SELECT id FROM admin_sessions ORDER BY created_at DESC LIMIT 1)');
    t.match(await writer.send('agent_takeover'), { ok: false, detail: /session ended/ }, 'a write after server-side revocation is refused');
    await writer.waitFor('disconnect');
    const [session] = await query(host.databaseUrl, 'SELECT status FROM chat_sessions WHERE id = $1', ['revoke']);
    t.equal(session!.status, 'AI_ACTIVE', 'the refused takeover changed nothing');
  });
});
