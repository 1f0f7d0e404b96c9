// The namespaces are socket.io namespaces, not raw WebSocket paths, and operator_id is the operator's own id:
// docs/spec-deviations.md, deviations 1 and 5.
import t from 'tap';
import { challengeHeader, createSubAdmin } from '../helpers/admins.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { stream } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

t.test('WebSocket rooms and human takeover (spec 3.1, 4.3)', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  const root = { client: admin, id: (await admin.login()).body.admin_user_id as string, username: 'root-admin' };
  const OPERATOR_PERMISSIONS = ['conversations.read', 'conversations.write'];
  const [alice, bob] = [await createSubAdmin(admin, 'alice', OPERATOR_PERMISSIONS), await createSubAdmin(admin, 'bob', OPERATOR_PERMISSIONS)];
  const createAgent = async (fields: Record<string, unknown>) => (await admin.request('POST', '/agents', { agent_type: 'chat', ...fields })).body;
  const agent = await createAgent({
    name: 'Support',
    public_access_mode: 'public_anonymous',
    human_takeover_enabled: true,
    system_prompt: 'Parcels ship within two days.',
    // Customers may choose the model: the fixed-response test sends an override that must not be written.
    model_routing_config: { allow_public_model_override: true },
    message_type_response_config: {
      form: { enabled: true, response_text: 'Form received.', message_key_responses: [{ message_key: 'Opening Hours', response_text: 'We are open 9 to 5.' }] },
      rule: { enabled: true, response_text: 'Rule noted.', message_key_responses: [{ message_key: 'Returns', response_text: 'Returns are free.' }] },
      other: { enabled: true, response_text: 'Something else, noted.', message_key_responses: [] },
    },
  });
  const noTakeover = await createAgent({ name: 'No takeover', public_access_mode: 'public_anonymous' });
  const internal = await createAgent({ name: 'Internal', public_access_mode: 'admin_only', human_takeover_enabled: true });
  /** A customer's session as a public client starts it: the server issues its id. */
  const issue = async (agentId: string) =>
    (await (await fetch(`${host.url}/public/agents/${agentId}/sessions`, { method: 'POST' })).json()).session_id as string;
  const [wsConnect, wsChat, wsTag, wsTakeover, restTakeover, restForce, longHistory, revoke, grantsSession, pub4, pubHand] = await Promise.all(
    Array.from({ length: 11 }, () => issue(agent.agent_id)),
  );
  const sockets: WsClient[] = [];
  t.teardown(() => sockets.forEach((s) => s.close()));
  const connect = async (namespace: string, options: Parameters<typeof WsClient.connect>[2] = {}) => {
    const client = await WsClient.connect(host.url, namespace, options);
    sockets.push(client);
    return client;
  };
  /** An operator socket of an administrator: `operator_id` is the administrator's own id. */
  const operator = (sessionId: string, who: { client: AdminClient; id: string; username: string } = root) =>
    connect(`/ws/${sessionId}`, {
      cookie: who.client.cookieHeader(),
      query: { role: 'operator', operator_id: who.id, operator_name: `Operator ${who.username}` },
    });
  const turnsOf = async (sessionId: string) =>
    (await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM conversation_turns WHERE session_id = $1', [sessionId]))[0]!.n;

  t.test('the demo gateway is off unless [demo_gateway] enables it', async (t) => {
    await t.rejects(connect('/demo', { query: { agent_id: agent.agent_id } }), { message: 'Invalid namespace' });
  });

  t.test('on connect the server sends history, then session', async (t) => {
    await stream(host.url, { thread_id: wsConnect, agent_id: agent.agent_id, message: 'When do parcels ship?' });
    const customer = await connect(`/public/ws/${wsConnect}`, { query: { agent_id: agent.agent_id } });
    const session = await customer.waitFor('session');
    t.same(
      customer.received.slice(0, 2).map((r) => r.type),
      ['history', 'session'],
      'history first, then session',
    );
    const history = customer.of('history')[0];
    t.same(
      history.messages.map((m: any) => m.role),
      ['user', 'assistant'],
    );
    t.equal(history.messages[1].content, 'Parcels ship within two days.');
    t.match(session, {
      type: 'session',
      session_id: wsConnect,
      status: 'AI_ACTIVE',
      agent_id: agent.agent_id,
      human_takeover_enabled: true,
      takeover_owner_id: null,
    });
  });

  t.test('a customer message runs the /stream pipeline and both messages reach the room', async (t) => {
    const customer = await connect(`/public/ws/${wsChat}`, { query: { agent_id: agent.agent_id } });
    const watcher = await operator(wsChat);
    t.same(await customer.send('user_message', { content: 'When do parcels ship?' }), { ok: true });
    const reply = await watcher.waitFor('message', (m) => m.message.role === 'assistant');
    t.equal(reply.message.content, 'Parcels ship within two days.');
    const user = await customer.waitFor('message', (m) => m.message.role === 'user');
    t.equal(user.message.content, 'When do parcels ship?');
    t.equal(await turnsOf(wsChat), 1, 'one turn, as for POST /stream');
    t.same(await customer.send('message', { event: '', content: 'An empty event with content is a user message' }), { ok: true });
    await customer.waitFor('message', (m) => m.message.content === 'An empty event with content is a user message');
    t.equal(await turnsOf(wsChat), 2);
    t.match(await customer.send('message', { event: 'dance' }), { ok: false, detail: /unknown event "dance"/ });
    t.match(await customer.send('user_message', { content: '   ' }), { ok: false, detail: /message is empty/ }, 'the pipeline refusals come back as errors');
    t.match(customer.of('error').at(-1), { type: 'error', detail: /message is empty/ });
  });

  t.test('a [message_type=...] tag is parsed first; a fixed-response hit calls no model and writes no override', async (t) => {
    const customer = await connect(`/public/ws/${wsTag}`, { query: { agent_id: agent.agent_id } });
    t.same(
      await customer.send('user_message', { content: '[message_type=form]\n  opening hours ', model_provider: 'offline', model_name: 'offline-extractive' }),
      { ok: true },
    );
    const reply = await customer.waitFor('message', (m) => m.message.role === 'assistant');
    t.equal(reply.message.content, 'We are open 9 to 5.');
    const user = await customer.waitFor('message', (m) => m.message.role === 'user');
    t.equal(user.message.content, '  opening hours ', 'the body after the tag is the stored message');
    const [turn] = await query(host.databaseUrl, 'SELECT response_source, message_type, token_usage_source FROM conversation_turns WHERE session_id = $1', [
      wsTag,
    ]);
    t.same(turn, { response_source: 'fixed_response', message_type: 'form', token_usage_source: 'no_model_invocation' });
    const [session] = await query(host.databaseUrl, 'SELECT model_provider FROM chat_sessions WHERE id = $1', [wsTag]);
    t.equal(session!.model_provider, null, 'no model override is written on the fixed-response path');
    t.same(await customer.send('user_message', { content: '[message_type=rule]\nreturns' }), { ok: true });
    t.equal(
      (await customer.waitFor('message', (m) => m.message.content === 'Returns are free.')).message.role,
      'assistant',
      'a rule tag matches the rule responses',
    );
    t.same(await customer.send('user_message', { content: '[message_type=other]\r\nsomething unusual' }), { ok: true });
    await customer.waitFor('message', (m) => m.message.content === 'Something else, noted.');
    t.pass('an other tag (here with CRLF) answers with the other default response');
    await customer.send('user_message', { content: '[message_type=rule] no newline, so no tag' });
    const turns = await query(
      host.databaseUrl,
      'SELECT t.message_type, m.content, t.response_source FROM conversation_turns t JOIN chat_messages m ON m.id = t.user_message_id WHERE t.session_id = $1 ORDER BY t.created_at',
      [wsTag],
    );
    t.same(
      turns.map((turn) => [turn.message_type, turn.content]),
      [
        ['form', '  opening hours '],
        ['rule', 'returns'],
        ['other', 'something unusual'],
        ['user_chat', '[message_type=rule] no newline, so no tag'],
      ],
      'each tag sets its message type and the body after it is the message; a tag without its newline is plain text',
    );
    t.same(
      turns.slice(0, 3).map((turn) => turn.response_source),
      ['fixed_response', 'fixed_response', 'fixed_response'],
    );
    t.not(turns[3]!.response_source, 'fixed_response', 'plain text is not matched against the rule responses');
  });

  t.test('takeover, customer messages during HUMAN_ACTIVE, manual replies, release: every row of 3.1', async (t) => {
    const customer = await connect(`/public/ws/${wsTakeover}`, { query: { agent_id: agent.agent_id } });
    const aliceWs = await operator(wsTakeover, alice);
    await customer.waitFor('session');

    t.same(await aliceWs.send('agent_takeover'), { ok: true }, 'AI_ACTIVE -> HUMAN_ACTIVE by WS agent_takeover');
    const state = await customer.waitFor('session', (s) => s.status === 'HUMAN_ACTIVE');
    t.match(state, { takeover_owner_id: alice.id, takeover_owner_name: 'Operator alice', takeover_released_at: null });
    t.ok(state.takeover_started_at, 'takeover_started_at is set');
    t.match(await customer.waitFor('system'), {
      status: 'HUMAN_ACTIVE',
      event_type: 'takeover',
      message: { role: 'system', metadata: { status: 'HUMAN_ACTIVE' } },
    });
    t.match(await customer.waitFor('takeover_event'), {
      event: { event_type: 'takeover', operator_id: alice.id, admin_user_id: alice.id, channel: 'websocket' },
    });

    t.same(await customer.send('user_message', { content: 'Is anyone there?' }), { ok: true });
    await aliceWs.waitFor('message', (m) => m.message.content === 'Is anyone there?');
    const viaStream = await stream(host.url, { thread_id: wsTakeover, agent_id: agent.agent_id, message: 'Hello from /stream' });
    t.same(viaStream.events, [{ type: 'done' }], '/stream during HUMAN_ACTIVE: the message is taken, no reply');
    await aliceWs.waitFor('message', (m) => m.message.content === 'Hello from /stream');
    t.equal(await turnsOf(wsTakeover), 0, 'no conversation turn while a human answers');
    t.notOk(
      customer.of('message').some((m) => m.message.role === 'assistant'),
      'the AI does not reply',
    );

    t.same(await aliceWs.send('user_message', { content: 'Alice here, how can I help?' }), { ok: true }, 'the owner replies by hand over WS');
    const manual = await customer.waitFor('message', (m) => m.message.role === 'agent');
    t.match(manual.message, { content: 'Alice here, how can I help?', sender_id_snapshot: alice.id, sender_name_snapshot: 'Operator alice' });
    await customer.waitFor('takeover_event', (e) => e.event.event_type === 'manual_message');
    const rest = await admin.request('POST', `/sessions/${wsTakeover}/manual-messages`, { content: 'From REST' });
    t.equal(rest.status, 409, 'REST manual messages need the active owner (root is not alice)');
    t.equal(await turnsOf(wsTakeover), 0, 'manual messages create no turn');

    const bobWs = await operator(wsTakeover, bob);
    t.match(await bobWs.send('user_message', { content: 'Bob butting in' }), { ok: false, detail: /only the operator who took over/ });
    t.match(await bobWs.send('agent_release'), { ok: false, detail: /only the owner releases it/ });
    t.match(await bobWs.send('agent_takeover'), { ok: false, detail: /already taken over by Operator alice; send force=true/ });
    t.same(await bobWs.send('agent_takeover', { force: true }), { ok: true }, 'force=true takes it from another operator');
    t.match(await customer.waitFor('takeover_event', (e) => e.event.event_type === 'force_takeover'), {
      event: { operator_id: bob.id, previous_owner_id: alice.id },
    });

    t.same(await bobWs.send('agent_release'), { ok: true }, 'HUMAN_ACTIVE -> AI_ACTIVE by the owner');
    const released = await customer.waitFor('session', (s) => s.status === 'AI_ACTIVE' && s.takeover_started_at !== null);
    t.match(released, { takeover_owner_id: null });
    t.ok(released.takeover_released_at, 'takeover_released_at is set');
    await customer.waitFor('system', (s) => s.status === 'AI_ACTIVE' && s.event_type === 'release');
    t.match(
      await customer.waitFor('takeover_event', (e) => e.event.event_type === 'release'),
      { event: { operator_id: bob.id, channel: 'websocket' } },
      'release broadcasts its takeover_event',
    );

    await customer.send('user_message', { content: 'When do parcels ship?' });
    await customer.waitFor('message', (m) => m.message.role === 'assistant' && m.message.content === 'Parcels ship within two days.');
    t.equal(await turnsOf(wsTakeover), 1, 'the AI answers again after release');

    const events = await admin.request('GET', `/sessions/${wsTakeover}/takeover-events`);
    t.same(
      events.body.items.map((e: any) => e.event_type),
      ['takeover', 'manual_message', 'force_takeover', 'release'],
      'the durable event stream',
    );
    const messages = await admin.request('GET', `/sessions/${wsTakeover}/messages?limit=200`);
    t.same(
      messages.body.items.filter((m: any) => m.role === 'system').map((m: any) => m.metadata.status),
      ['HUMAN_ACTIVE', 'HUMAN_ACTIVE', 'AI_ACTIVE'],
      'one extra system message per transition',
    );
    const audits = await query(host.databaseUrl, 'SELECT action FROM admin_action_audits WHERE target_id = $1 ORDER BY id', [wsTakeover]);
    t.same(
      audits.map((a) => a.action),
      ['session.takeover', 'session.manual_message', 'session.force_takeover', 'session.release'],
      'each transition is audited',
    );
  });

  t.test('takeover over REST: the administrator is the operator; list items show the owner', async (t) => {
    await stream(host.url, { thread_id: restTakeover, agent_id: agent.agent_id, message: 'hi' });
    const customer = await connect(`/public/ws/${restTakeover}`);
    await customer.waitFor('session');
    const taken = await admin.request('POST', `/sessions/${restTakeover}/takeover`, {});
    t.equal(taken.status, 200);
    t.match(taken.body, { status: 'HUMAN_ACTIVE', takeover_owner_name: 'root-admin' });
    await customer.waitFor('system', (s) => s.status === 'HUMAN_ACTIVE');
    const manual = await admin.request('POST', `/sessions/${restTakeover}/manual-messages`, { content: 'Typed in the console' });
    t.equal(manual.status, 201);
    t.match(manual.body, { role: 'agent', sender_name_snapshot: 'root-admin' });
    await customer.waitFor('message', (m) => m.message.content === 'Typed in the console');
    const list = await admin.request('GET', `/sessions?q=${restTakeover}`);
    t.match(list.body.items[0], {
      session_id: restTakeover,
      agent_name: 'Support',
      human_takeover_enabled: true,
      status: 'HUMAN_ACTIVE',
      takeover_owner_id: root.id,
      takeover_owner_name: 'root-admin',
      takeover_released_at: null,
    });
    t.ok(list.body.items[0].takeover_started_at);
    t.equal((await admin.request('POST', `/sessions/${restTakeover}/takeover?force=false`, {})).status, 200, 'taking over again as the owner changes nothing');
    t.equal((await admin.request('POST', `/sessions/${restTakeover}/release`, {})).status, 200);
    t.equal((await admin.request('POST', `/sessions/${restTakeover}/release`, {})).status, 409, 'nothing to release');
    t.equal((await admin.request('POST', `/sessions/${restTakeover}/manual-messages`, { content: 'late' })).status, 409, 'no manual messages after release');
    t.equal((await admin.request('POST', '/sessions/no-such-session/takeover', {})).status, 404);
  });

  t.test('over REST a second administrator takes over with force, and releases with force', async (t) => {
    await stream(host.url, { thread_id: restForce, agent_id: agent.agent_id, message: 'hi' });
    const customer = await connect(`/public/ws/${restForce}`);
    await customer.waitFor('session');
    t.equal((await alice.client.request('POST', `/sessions/${restForce}/takeover`, {})).status, 200, 'alice takes over');
    const refused = await bob.client.request('POST', `/sessions/${restForce}/takeover`, {});
    t.equal(refused.status, 409, 'bob needs force');
    t.match(refused.body.detail, /already taken over by alice; send force=true/);
    const forced = await bob.client.request('POST', `/sessions/${restForce}/takeover?force=true`, {});
    t.equal(forced.status, 200);
    t.match(forced.body, { status: 'HUMAN_ACTIVE', takeover_owner_id: bob.id, takeover_owner_name: 'bob' });
    t.match(await customer.waitFor('takeover_event', (e) => e.event.event_type === 'force_takeover'), {
      event: { operator_id: bob.id, previous_owner_id: alice.id, channel: 'rest' },
    });
    t.equal(
      (await alice.client.request('POST', `/sessions/${restForce}/manual-messages`, { content: 'still mine?' })).status,
      409,
      'the previous owner no longer replies by hand',
    );
    const notOwner = await alice.client.request('POST', `/sessions/${restForce}/release`, {});
    t.equal(notOwner.status, 409, 'only the owner releases without force');
    t.match(notOwner.body.detail, /owned by bob; only the owner releases it, or send force=true/);
    const forcedRelease = await alice.client.request('POST', `/sessions/${restForce}/release`, { force: true });
    t.equal(forcedRelease.status, 200, 'another operator releases with force');
    t.match(forcedRelease.body, { status: 'AI_ACTIVE', takeover_owner_id: null });
    t.match(await customer.waitFor('takeover_event', (e) => e.event.event_type === 'release'), { event: { operator_id: alice.id, channel: 'rest' } });
    const events = await admin.request('GET', `/sessions/${restForce}/takeover-events`);
    t.same(
      events.body.items.map((e: any) => [e.event_type, e.operator_id, e.previous_owner_id]),
      [
        ['takeover', alice.id, null],
        ['force_takeover', bob.id, alice.id],
        ['release', alice.id, null],
      ],
    );
  });

  t.test('the operator is the administrator: operator_id names only oneself, on REST and WebSocket alike', async (t) => {
    await admin.stream({ thread_id: 'who', agent_id: agent.agent_id, message: 'hi' });
    await t.rejects(
      connect('/ws/who', { cookie: bob.client.cookieHeader(), query: { role: 'operator', operator_id: alice.id } }),
      new RegExp(`operator_id must be your own administrator id \\(${bob.id}\\)`),
      "an administrator cannot connect as another operator's id",
    );
    t.equal((await alice.client.request('POST', '/sessions/who/takeover', {})).status, 200, 'alice takes over over REST');
    const aliceWs = await operator('who', alice);
    t.same(
      await aliceWs.send('user_message', { content: 'Alice, typing in the live console' }),
      { ok: true },
      "alice's socket is the same owner as alice's REST takeover",
    );
    const bobWs = await operator('who', bob);
    t.match(await bobWs.send('user_message', { content: 'I am alice' }), { ok: false, detail: /only the operator who took over/ });
    t.same(await aliceWs.send('agent_release'), { ok: true });
    const events = await admin.request('GET', '/sessions/who/takeover-events');
    t.same(
      events.body.items.map((e: any) => [e.event_type, e.operator_id, e.channel]),
      [
        ['takeover', alice.id, 'rest'],
        ['manual_message', alice.id, 'websocket'],
        ['release', alice.id, 'websocket'],
      ],
    );
  });

  t.test('a human reply has the message length limit on every channel', async (t) => {
    await admin.stream({ thread_id: 'long-reply', agent_id: agent.agent_id, message: 'hi' });
    const rootWs = await operator('long-reply');
    t.same(await rootWs.send('agent_takeover'), { ok: true });
    const tooLong = 'x'.repeat(8001);
    t.match(await rootWs.send('user_message', { content: tooLong }), { ok: false, detail: 'content is 8001 characters; the limit is 8000' }, 'over WebSocket');
    const rest = await admin.request('POST', '/sessions/long-reply/manual-messages', { content: tooLong });
    t.equal(rest.status, 422, 'over REST');
    t.same(rest.body.detail, [{ loc: ['body', 'content'], msg: 'content is 8001 characters; the limit is 8000', type: 'too_long' }]);
    t.match(await rootWs.send('user_message', { content: '  ' }), { ok: false, detail: 'content is empty' });
    t.equal((await admin.request('POST', '/sessions/long-reply/manual-messages', { content: '' })).status, 422);
    t.same(await rootWs.send('user_message', { content: 'x'.repeat(8000) }), { ok: true }, 'the limit itself is allowed');
    const [{ n }] = (await query(host.databaseUrl, "SELECT count(*)::int AS n FROM chat_messages WHERE session_id = 'long-reply' AND role = 'agent'")) as [
      { n: number },
    ];
    t.equal(n, 1, 'only the reply within the limit is stored');
  });

  t.test('only chat agents with human_takeover_enabled can be taken over', async (t) => {
    await admin.stream({ thread_id: 'no-takeover', agent_id: noTakeover.agent_id, message: 'hi' });
    const refused = await admin.request('POST', '/sessions/no-takeover/takeover', { force: true });
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /without human takeover/);
    const ws = await operator('no-takeover');
    t.match(await ws.send('agent_takeover'), { ok: false, detail: /without human takeover/ });
  });

  t.test('two operators taking over at the same moment without force: exactly one wins', async (t) => {
    await admin.stream({ thread_id: 'race', agent_id: agent.agent_id, message: 'hi' });
    const admins = [];
    for (const name of ['r1', 'r2', 'r3', 'r4']) admins.push(await createSubAdmin(admin, name, OPERATOR_PERMISSIONS));
    const racers = await Promise.all(admins.map((who) => operator('race', who)));
    for (let round = 0; round < 5; round++) {
      const acks = await Promise.all(racers.map((r) => r.send('agent_takeover')));
      t.equal(acks.filter((a) => a.ok).length, 1, `round ${round}: one winner`);
      const [session] = await query(host.databaseUrl, 'SELECT takeover_owner_id FROM chat_sessions WHERE id = $1', ['race']);
      const winner = racers[acks.findIndex((a) => a.ok)]!;
      t.equal(session!.takeover_owner_id, admins[racers.indexOf(winner)]!.id, 'the winner owns the session');
      t.same(await winner.send('agent_release'), { ok: true });
    }
    const [{ n }] = (await query(
      host.databaseUrl,
      "SELECT count(*)::int AS n FROM session_takeover_events WHERE session_id = 'race' AND event_type = 'takeover'",
    )) as [{ n: number }];
    t.equal(n, 5, 'one takeover event per round');
  });

  t.test('the public namespace: customers only, public agents only', async (t) => {
    await t.rejects(connect('/public/ws/pub-1', { query: { agent_id: agent.agent_id, role: 'operator', operator_id: 'x' } }), /serves customers only/);
    await t.rejects(
      connect(`/public/ws/${pub4}`, { query: { agent_id: internal.agent_id } }),
      /not found; start one/,
      'a session is joined only with its own agent',
    );
    await t.rejects(
      connect('/public/ws/pub-3'),
      /session pub-3 not found; start one with POST \/public\/agents/,
      'a session the server did not issue is not served',
    );
    await admin.stream({ thread_id: 'pub-internal', agent_id: internal.agent_id, message: 'hi' });
    await t.rejects(
      connect('/public/ws/pub-internal', { query: { agent_id: agent.agent_id } }),
      /not found; start one/,
      'nor is a session of a non-public agent',
    );
    t.equal(
      (await fetch(`${host.url}/public/agents/${internal.agent_id}/sessions`, { method: 'POST' })).status,
      404,
      'which cannot be started publicly either',
    );
    const customer = await connect(`/public/ws/${pub4}`, { query: { agent_id: agent.agent_id } });
    t.match(await customer.send('agent_takeover'), { ok: false, detail: /public WebSocket cannot take over/ });
    t.match(await customer.send('agent_release'), { ok: false, detail: /public WebSocket cannot take over/ });
  });

  t.test('the public namespace never serves a session without a public agent', async (t) => {
    await admin.stream({ thread_id: 'pub-agentless', message: 'hi' });
    const [row] = await query(host.databaseUrl, 'SELECT agent_id FROM chat_sessions WHERE id = $1', ['pub-agentless']);
    t.same(row, { agent_id: null }, 'a session an administrator started on /stream without agent_id has no agent');
    await t.rejects(connect('/public/ws/pub-agentless'), /session pub-agentless not found/, 'no agent, no public socket');

    const soonPrivate = await createAgent({ name: 'Soon private', public_access_mode: 'public_anonymous', human_takeover_enabled: true });
    const soon = await issue(soonPrivate.agent_id);
    const customer = await connect(`/public/ws/${soon}`, { query: { agent_id: soonPrivate.agent_id } });
    t.same(await customer.send('user_message', { content: 'first' }), { ok: true });
    t.equal((await admin.request('PATCH', `/agents/${soonPrivate.agent_id}`, { public_access_mode: 'admin_only' })).status, 200);
    t.match(await customer.send('user_message', { content: 'second' }), { ok: false, detail: /is no longer public/ }, 'a later send is refused');
    t.match(await customer.waitFor('error', (e) => e.code === 'SESSION_NOT_PUBLIC'), { detail: /no longer public/ });
    await customer.waitFor('disconnect');
    t.pass('and the socket is closed');
    const stored = await query(host.databaseUrl, "SELECT content FROM chat_messages WHERE session_id = $1 AND role = 'user' ORDER BY created_at", [soon]);
    t.same(
      stored.map((m) => m.content),
      ['first'],
      'nothing from the refused send is stored',
    );
    await t.rejects(connect(`/public/ws/${soon}`), /not found; start one/, 'nor can it reconnect');
  });

  t.test("the public namespace cannot reply by hand: during HUMAN_ACTIVE its messages stay the customer's", async (t) => {
    const customer = await connect(`/public/ws/${pubHand}`, { query: { agent_id: agent.agent_id, operator_id: root.id, operator_name: 'Not an operator' } });
    t.equal((await admin.request('POST', `/sessions/${pubHand}/takeover`, {})).status, 200);
    await customer.waitFor('session', (s) => s.status === 'HUMAN_ACTIVE');
    t.same(await customer.send('user_message', { content: 'Pretending to be staff', role: 'agent', operator_id: root.id }), { ok: true });
    const echoed = await customer.waitFor('message', (m) => m.message.content === 'Pretending to be staff');
    t.match(echoed.message, { role: 'user', sender_id_snapshot: null, sender_name_snapshot: null }, 'stored as the customer, not as a human reply');
    const events = await admin.request('GET', `/sessions/${pubHand}/takeover-events`);
    t.same(
      events.body.items.map((e: any) => e.event_type),
      ['takeover'],
      'no manual_message event',
    );
  });

  t.test('the administrator namespace needs a live login with conversations.read; operators need operator_id', async (t) => {
    await t.rejects(connect(`/ws/${wsConnect}`), /administrator login required/);
    await t.rejects(connect(`/ws/${wsConnect}`, { cookie: 'agent_host_access=forged' }), /expired or revoked/);
    await t.rejects(connect('/ws/unknown-session', { cookie: admin.cookieHeader() }), /not found/);
    const reader = await createSubAdmin(admin, 'reader', ['agents.read']);
    await t.rejects(connect(`/ws/${wsConnect}`, { cookie: reader.client.cookieHeader() }), /missing permission conversations.read/);
    const anonymousOperator = await connect(`/ws/${wsConnect}`, { cookie: admin.cookieHeader(), query: { role: 'operator' } });
    t.match(await anonymousOperator.send('agent_takeover'), { ok: false, detail: /operator_id is required/ });
    const customerRole = await connect(`/ws/${wsConnect}`, { cookie: admin.cookieHeader() });
    t.match(await customerRole.send('agent_takeover'), { ok: false, detail: /role=operator/ });
  });

  t.test('history holds at most the latest 200 messages', async (t) => {
    await stream(host.url, { thread_id: longHistory, agent_id: agent.agent_id, message: 'first' });
    await query(
      host.databaseUrl,
      "INSERT INTO chat_messages (id, session_id, role, content, created_at) SELECT gen_random_uuid(), $1, 'user', 'm' || i, now() + i * interval '1 ms' FROM generate_series(1, 250) i",
      [longHistory],
    );
    const customer = await connect(`/public/ws/${longHistory}`);
    const history = await customer.waitFor('history');
    t.equal(history.messages.length, 200);
    t.equal(history.messages[0].content, 'm51', 'the oldest kept is the 200th newest');
    t.equal(history.messages.at(-1).content, 'm250', 'oldest first, newest last');
  });

  t.test('after logout an administrator socket is told why and closed; nothing more is sent or accepted', async (t) => {
    const dave = await createSubAdmin(admin, 'dave', OPERATOR_PERMISSIONS);
    await stream(host.url, { thread_id: revoke, agent_id: agent.agent_id, message: 'hi' });
    const watcher = await operator(revoke, dave);
    const customer = await connect(`/public/ws/${revoke}`);
    await watcher.waitFor('session');

    t.equal((await dave.client.request('POST', '/admin/auth/refresh')).status, 200, 'a routine token refresh');
    t.equal((await dave.client.request('GET', '/admin/auth/me')).status, 200);
    await customer.send('user_message', { content: 'after refresh' });
    await watcher.waitFor('message', (m) => m.message.content === 'after refresh');
    t.pass('the socket opened with the old access token still receives broadcasts after a refresh');
    t.same(await watcher.send('agent_takeover'), { ok: true }, 'and can still send');
    t.same(await watcher.send('agent_release'), { ok: true });
    t.equal(watcher.of('error').length, 0, 'the refresh closed nothing');

    t.equal((await dave.client.request('POST', '/admin/auth/logout')).status, 200);
    await customer.send('user_message', { content: 'after logout' });
    await customer.waitFor('message', () => customer.of('message').filter((m) => m.message.role === 'assistant').length === 2);
    t.match(await watcher.waitFor('error'), { detail: /session ended/, code: 'SESSION_REVOKED' });
    await watcher.waitFor('disconnect');
    t.notOk(
      watcher.of('message').some((m) => m.message.content === 'after logout'),
      'the revoked socket got no message after logout',
    );

    const second = new AdminClient(host.url);
    await second.login();
    const writer = await connect(`/ws/${revoke}`, { cookie: second.cookieHeader(), query: { role: 'operator', operator_id: root.id } });
    await writer.waitFor('session');
    await query(
      host.databaseUrl,
      'UPDATE admin_sessions SET revoked_at = now() WHERE revoked_at IS NULL AND id IN (SELECT id FROM admin_sessions ORDER BY created_at DESC LIMIT 1)',
    );
    t.match(await writer.send('agent_takeover'), { ok: false, detail: /session ended/ }, 'a write after server-side revocation is refused');
    await writer.waitFor('disconnect');
    const [session] = await query(host.databaseUrl, 'SELECT status FROM chat_sessions WHERE id = $1', [revoke]);
    t.equal(session!.status, 'AI_ACTIVE', 'the refused takeover changed nothing');
  });

  t.test('permissions are re-read before each send: a revoked grant stops taking over, then watching', async (t) => {
    const erin = await createSubAdmin(admin, 'erin', OPERATOR_PERMISSIONS);
    await stream(host.url, { thread_id: grantsSession, agent_id: agent.agent_id, message: 'hi' });
    const erinWs = await operator(grantsSession, erin);
    const customer = await connect(`/public/ws/${grantsSession}`);
    await erinWs.waitFor('session');
    const grants = (await admin.request('GET', `/admin/admin-users/${erin.id}`)).body.grants as { grant_id: string; permission_code: string }[];
    const revoke = async (code: string) => {
      const grant = grants.find((g) => g.permission_code === code)!;
      const revoked = await admin.request('DELETE', `/admin/admin-users/${erin.id}/permissions/${grant.grant_id}`, undefined, await challengeHeader(admin));
      t.equal(revoked.status, 200, `${code} revoked`);
    };

    await revoke('conversations.write');
    t.match(
      await erinWs.send('agent_takeover'),
      { ok: false, detail: 'missing permission conversations.write' },
      'without conversations.write the socket no longer takes over',
    );
    await customer.send('user_message', { content: 'still watched' });
    await erinWs.waitFor('message', (m) => m.message.content === 'still watched');
    t.pass('with conversations.read left it still watches');

    await revoke('conversations.read');
    await customer.send('user_message', { content: 'no longer watched' });
    await customer.waitFor('message', (m) => m.message.content === 'no longer watched');
    t.match(await erinWs.waitFor('error', (e) => e.code === 'PERMISSION_REVOKED'), { detail: /missing permission conversations.read/ });
    await erinWs.waitFor('disconnect');
    t.notOk(
      erinWs.of('message').some((m) => m.message.content === 'no longer watched'),
      'without conversations.read it is closed before the next broadcast',
    );
    const [session] = await query(host.databaseUrl, 'SELECT status FROM chat_sessions WHERE id = $1', [grantsSession]);
    t.equal(session!.status, 'AI_ACTIVE');
  });
});
