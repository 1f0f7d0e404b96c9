// POST /stream and the people watching a session (spec 3.1, 4.3): operators
// see the customer's message as soon as the turn starts, not once the reply
// is stored, and a takeover that commits while the turn is under way stops
// the AI before its next model call. Broadcasts are read from the session
// event bus the WebSocket gateway fans out.
import t from 'tap';
import type { SessionBroadcast } from '@agent-host/core';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { readEvents } from '../helpers/sse.js';

/** `POST /stream` as an administrator, who names the session. */
const post = (url: string, body: unknown, cookie: string) =>
  fetch(`${url}/stream`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });

t.test('the customer message reaches operators at once; a takeover stops the AI before its next model call', async (t) => {
  const fixture = await startOpenAiFixture();
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agentWith = async (orchestrator_key: string) =>
    (
      await admin.request('POST', '/agents', {
        name: orchestrator_key,
        agent_type: 'chat',
        orchestrator_key,
        public_access_mode: 'public_anonymous',
        human_takeover_enabled: true,
        model_provider: 'openai',
        model_name: 'gpt-4o-mini',
      })
    ).body.agent_id as string;
  const broadcasts: SessionBroadcast[] = [];
  t.teardown(host.app.domains.sessionEvents.subscribe((b) => broadcasts.push(b)));
  const messagesOf = (sessionId: string) => broadcasts.flatMap((b) => (b.type === 'message' && b.session_id === sessionId ? [b.message] : []));

  t.test('the stored user message is broadcast when the turn starts, the reply when it is stored', async (t) => {
    const agentId = await agentWith('core_chat_v1');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fixture.setRespond(() => ({ chunks: ['Your parcel ', 'ships today.'], beforeChunk: (index) => (index === 2 ? held : undefined) }));
    const response = post(host.url, { thread_id: 'live-1', agent_id: agentId, message: 'Where is my parcel?' }, admin.cookieHeader('/'));
    await eventually(() => (fixture.requests.at(-1)?.outcome === 'pending' ? true : undefined), 'the model call, held mid-reply');
    const [shown] = messagesOf('live-1');
    t.ok(shown, 'while the model is still answering, the customer message has been broadcast');
    t.same([shown!.role, shown!.content, shown!.turn_id === null], ['user', 'Where is my parcel?', false], "the customer's message, with its turn");
    t.equal(messagesOf('live-1').length, 1, 'the reply is not shown before it exists');
    release();
    await readEvents(await response);
    const reply = await eventually(() => messagesOf('live-1')[1], 'the reply broadcast');
    t.same([reply.role, reply.content], ['assistant', 'Your parcel ships today.']);
    t.equal(messagesOf('live-1').length, 2, 'the user message is not broadcast a second time');
    const stored = await query(host.databaseUrl, 'SELECT id, role, content, created_at FROM chat_messages WHERE session_id = $1 ORDER BY created_at', [
      'live-1',
    ]);
    t.same(
      stored.map((m) => [m.id, m.role]),
      [
        [shown!.message_id, 'user'],
        [reply.message_id, 'assistant'],
      ],
      'the stored messages carry the broadcast ids, in order',
    );
    t.equal(new Date(stored[0]!.created_at).toISOString(), shown!.created_at, 'and the broadcast time');
    const [turn] = await query(host.databaseUrl, 'SELECT user_message_id, status FROM conversation_turns WHERE session_id = $1', ['live-1']);
    t.same([turn!.user_message_id, turn!.status], [shown!.message_id, 'completed']);
  });

  t.test("a customer's message under takeover waits for the turn still answering, then is stored and shown", async (t) => {
    const agentId = await agentWith('core_chat_v1');
    const session = (await admin.request('POST', `/public/agents/${agentId}/sessions`)).body.session_id as string;
    const customer = (message: string) => post(host.url, { thread_id: session, agent_id: agentId, message }, '');
    const stored = () => query(host.databaseUrl, 'SELECT role, content FROM chat_messages WHERE session_id = $1 ORDER BY created_at, id', [session]);
    // The host sees the session under takeover once, so the customer's next message is admitted by the statement that
    // stores it when nobody is in the session's line.
    t.equal((await admin.request('POST', `/sessions/${session}/takeover`, {})).status, 200);
    t.same(
      (await readEvents(await customer('Anyone?'))).map((e) => e.type),
      ['done'],
      'a message under takeover gets no AI reply',
    );
    t.equal((await admin.request('POST', `/sessions/${session}/release`, {})).status, 200);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fixture.setRespond(() => ({ chunks: ['Let me ', 'check.'], beforeChunk: (index) => (index === 1 ? held : undefined) }));
    // An administrator's message gets an AI reply, held mid-way; an operator takes over meanwhile.
    const first = post(host.url, { thread_id: session, agent_id: agentId, message: 'Where is the parcel?' }, admin.cookieHeader('/'));
    await eventually(() => (fixture.requests.at(-1)?.outcome === 'pending' ? true : undefined), 'the model call, held mid-reply');
    t.equal((await admin.request('POST', `/sessions/${session}/takeover`, {})).status, 200, 'an operator takes over while the AI answers');
    const second = customer('Hello?');
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.notOk(
      (await stored()).some((m) => m.content === 'Hello?'),
      "the customer's message sent meanwhile is not stored while the turn ahead of it runs",
    );
    t.notOk(
      messagesOf(session).some((m) => m.content === 'Hello?'),
      'nor shown',
    );
    release();
    await readEvents(await first);
    t.same(
      (await readEvents(await second)).map((e) => e.type),
      ['done'],
      'once the turn ahead is done, it is stored with no AI reply',
    );
    t.same((await stored()).at(-1), { role: 'user', content: 'Hello?' }, 'after everything the turn ahead stored');
    t.ok(
      messagesOf(session).some((m) => m.content === 'Hello?'),
      'and shown',
    );
    const [line] = await query<{ n: number }>(host.databaseUrl, 'SELECT count(*)::int AS n FROM session_turn_queue WHERE session_id = $1', [session]);
    t.equal(line!.n, 0, 'the line is empty again');
  });

  t.test('a takeover committed during the turn stops the AI reply before the next model call', async (t) => {
    const agentId = await agentWith('react_agent_v1');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const before = fixture.bodies.length;
    // Step 1 asks for a tool (held until the takeover commits); step 2 would answer.
    fixture.setRespond((body) =>
      (body.messages as { role: string }[]).some((m) => m.role === 'tool')
        ? { content: 'The AI would answer here.' }
        : { tool_calls: [{ name: 'search_knowledge', arguments: { query: 'parcel' } }], beforeChunk: (index) => (index === 1 ? held : undefined) },
    );
    const response = post(host.url, { thread_id: 'taken-1', agent_id: agentId, message: 'Where is my parcel?' }, admin.cookieHeader('/'));
    await eventually(() => (fixture.bodies.length > before ? true : undefined), 'the first model call');
    const taken = await admin.request('POST', '/sessions/taken-1/takeover', {});
    t.same([taken.status, taken.body.status], [200, 'HUMAN_ACTIVE'], 'an operator takes over mid-turn');
    release();
    const events = await readEvents(await response);
    t.same(
      events.map((e) => e.type),
      ['done'],
      'the AI goes silent: no reply, no error, done',
    );
    t.equal(fixture.bodies.length - before, 1, 'the model is not called again after the takeover');
    const [turn] = await query(host.databaseUrl, 'SELECT status, error_message, assistant_message_id FROM conversation_turns WHERE session_id = $1', [
      'taken-1',
    ]);
    t.same(
      [turn!.status, turn!.error_message, turn!.assistant_message_id],
      ['aborted', 'a human operator took over the session', null],
      'the turn is stored as stopped, without a reply',
    );
    const stored = await query(host.databaseUrl, 'SELECT role FROM chat_messages WHERE session_id = $1 ORDER BY created_at', ['taken-1']);
    t.same(
      stored.map((m) => m.role),
      ['user', 'system'],
      "the customer's message and the takeover notice; no AI reply",
    );
    t.notOk(
      messagesOf('taken-1').some((m) => m.role === 'assistant'),
      'no AI reply is broadcast',
    );
  });
});
