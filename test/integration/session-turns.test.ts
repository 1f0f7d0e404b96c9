// Issue 15 item 5: a session answers one message at a time, across instances, with a multitask strategy per agent;
// a running turn is cancelled by its caller closing the stream or by an administrator.
import t from 'tap';
import { leaveLine } from '../../core/src/chat/turn-queue-store.js';
import { lastUserText, startOpenAiFixture } from '../fixtures/openai-server.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { rowsRead } from '../helpers/plan.js';
import { query } from '../helpers/services.js';
import { stream, tokensOf } from '../helpers/sse.js';

t.test('double texting and cancellation', async (t) => {
  let chunkDelayMs = 120;
  /** How many messages of the conversation each model request carried. */
  const seen: number[] = [];
  const fixture = await startOpenAiFixture({
    respond: (body) => {
      seen.push(body.messages.filter((m: { role: string }) => m.role === 'user' || m.role === 'assistant').length);
      return { chunks: ['re: ', ...lastUserText(body).split(/(?<= )/)], chunkDelayMs, usage: { prompt_tokens: 10, completion_tokens: 3 } };
    },
  });
  t.teardown(() => fixture.close());
  const env = { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` };
  const hostA = await startTestHost(t, { env });
  // A second instance on the same database: the line of a session holds across instances.
  const hostB = await startTestHost(t, { env, databaseUrl: hostA.databaseUrl });
  const admin = new AdminClient(hostA.url);
  await admin.login();
  const cookie = admin.cookieHeader('/');
  const model = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
  const createAgent = async (fields: Record<string, unknown>) => (await admin.request('POST', '/agents', { agent_type: 'chat', ...model, ...fields })).body;
  const history = async (sessionId: string) =>
    (await query(hostA.databaseUrl, 'SELECT role, content FROM chat_messages WHERE session_id = $1 ORDER BY created_at, id', [sessionId])).map(
      (m) => `${m.role}: ${m.content}`,
    );

  t.test('enqueue (the default): three messages sent at once are answered one after another, in order, on two instances', async (t) => {
    const agent = await createAgent({ name: 'Queue' });
    t.equal(agent.multitask_strategy, 'enqueue', 'the default strategy');
    const send = (url: string, message: string) => stream(url, { thread_id: 'double-text', agent_id: agent.agent_id, message }, { cookie });
    // Each message is sent once the one before it has joined the line: "at once", in a known order (a fixed pause let
    // an instance's first, colder request join after a later one on the warmer instance). A message counts from its
    // ticket on; the statement storing its turn removes the ticket, so tickets and stored turns never count less.
    const joined = `SELECT (SELECT count(*) FROM session_turn_queue WHERE session_id = $1) + (SELECT count(*) FROM conversation_turns WHERE session_id = $1) AS n`;
    const inLine = (n: number) =>
      eventually(
        async () => (Number((await query(hostA.databaseUrl, joined, ['double-text']))[0]!.n) >= n ? true : undefined),
        `${n} messages in the line`,
        10_000,
        10,
      );
    const first = send(hostA.url, 'one ');
    await inLine(1);
    const second = send(hostB.url, 'two ');
    await inLine(2);
    const third = send(hostA.url, 'three ');
    const answers = await Promise.all([first, second, third]);
    t.same(
      answers.map((a) => tokensOf(a.events)),
      ['re: one ', 're: two ', 're: three '],
      'every message is answered',
    );
    t.same(
      await history('double-text'),
      ['user: one ', 'assistant: re: one ', 'user: two ', 'assistant: re: two ', 'user: three ', 'assistant: re: three '],
      'the history does not interleave',
    );
    const turns = await query(hostA.databaseUrl, 'SELECT latency_ms, created_at FROM conversation_turns WHERE session_id = $1 ORDER BY created_at', [
      'double-text',
    ]);
    t.equal(turns.length, 3);
    t.same(await query(hostA.databaseUrl, 'SELECT * FROM session_turn_queue'), [], 'every ticket left the line');
  });

  t.test('eight messages sent together to one session on two instances: one turn at a time, each seeing every turn before it', async (t) => {
    const agent = await createAgent({ name: 'Burst' });
    seen.length = 0;
    const messages = Array.from({ length: 8 }, (_, i) => `burst ${i} `);
    // Sent at once: each turn's statement may start before another's commits, where the line must still hold.
    const answers = await Promise.all(
      messages.map((message, i) => stream(i % 2 ? hostB.url : hostA.url, { thread_id: 'burst', agent_id: agent.agent_id, message }, { cookie })),
    );
    t.same(
      answers.map((a) => tokensOf(a.events)),
      messages.map((m) => `re: ${m}`),
      'every message is answered',
    );
    t.same(
      [...seen].sort((a, b) => a - b),
      [1, 3, 5, 7, 9, 11, 13, 15],
      'each model request carries every turn stored before it: no two turns ran together',
    );
    const stored = await history('burst');
    t.ok(
      stored.every((m, i) => (i % 2 === 0 ? m.startsWith('user: burst') : m === `assistant: re: ${stored[i - 1]!.slice('user: '.length)}`)),
      `the history does not interleave: ${JSON.stringify(stored)}`,
    );
    t.same(await query(hostA.databaseUrl, 'SELECT * FROM session_turn_queue'), [], 'every ticket left the line');
  });

  t.test('reject: a message sent while the session answers is a 409 SESSION_BUSY, before any stream', async (t) => {
    const agent = await createAgent({ name: 'Strict', multitask_strategy: 'reject' });
    const running = stream(hostA.url, { thread_id: 'strict', agent_id: agent.agent_id, message: 'a long one ' }, { cookie });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const refused = await stream(hostB.url, { thread_id: 'strict', agent_id: agent.agent_id, message: 'hello? ' }, { cookie });
    t.match(refused, { status: 409, body: { code: 'SESSION_BUSY', request_id: String } }, 'refused on the other instance too');
    t.equal(tokensOf((await running).events), 're: a long one ');
    t.same(await history('strict'), ['user: a long one ', 'assistant: re: a long one '], 'the refused message is not stored');
    const after = await stream(hostB.url, { thread_id: 'strict', agent_id: agent.agent_id, message: 'now ' }, { cookie });
    t.equal(tokensOf(after.events), 're: now ', 'once the answer is done the next message is served');
  });

  t.test('an administrator cancels the running turn from another instance; the turn is stored cancelled with its usage', async (t) => {
    chunkDelayMs = 400;
    t.teardown(() => (chunkDelayMs = 120));
    const agent = await createAgent({ name: 'Cancellable' });
    const running = stream(hostA.url, { thread_id: 'cancel-me', agent_id: agent.agent_id, message: 'please write a long essay about parcels ' }, { cookie });
    const other = new AdminClient(hostB.url);
    await other.login();
    let cancelled: Awaited<ReturnType<AdminClient['request']>> | undefined;
    for (let i = 0; i < 40 && cancelled?.status !== 202; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      cancelled = await other.request('POST', '/sessions/cancel-me/cancel');
    }
    t.match(cancelled, { status: 202, body: { session_id: 'cancel-me', status: 'cancelling' } });
    const { events } = await running;
    t.match(
      events.find((e) => e.type === 'error'),
      { code: 'TURN_CANCELLED', content: /cancelled by/ },
      'the caller is told',
    );
    t.equal(events.at(-1)!.type, 'done', 'and done is still last');
    const [turn] = await query(
      hostA.databaseUrl,
      'SELECT id, status, error_message, total_tokens, token_usage_source FROM conversation_turns WHERE session_id = $1',
      ['cancel-me'],
    );
    t.match(turn, { status: 'cancelled', error_message: /^cancelled by / }, 'stored as cancelled');
    t.ok(turn!.token_usage_source, `with the usage spent so far (${turn!.token_usage_source}, ${turn!.total_tokens} tokens)`);
    t.equal(cancelled!.body.turn_id, turn!.id, 'the cancel named the turn it stopped');
    const [audit] = await query(hostA.databaseUrl, "SELECT target_id, payload FROM admin_action_audits WHERE action = 'session.turn.cancel'");
    t.match(audit, { target_id: 'cancel-me', payload: { turn_id: turn!.id } }, 'audited');
    const idle = await other.request('POST', '/sessions/cancel-me/cancel');
    t.match(idle, { status: 409, body: { code: 'NO_TURN_RUNNING' } }, 'nothing left to cancel');
  });

  t.test('a caller that closes the stream cancels its turn, and the next message is served', async (t) => {
    chunkDelayMs = 400;
    t.teardown(() => (chunkDelayMs = 120));
    const agent = await createAgent({ name: 'Leaver' });
    const client = new AbortController();
    const response = await fetch(`${hostA.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ thread_id: 'leaver', agent_id: agent.agent_id, message: 'a long question indeed ' }),
      signal: client.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    client.abort();
    let status: string | undefined;
    for (let i = 0; i < 50 && !status; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await query(hostA.databaseUrl, 'SELECT status FROM conversation_turns WHERE session_id = $1', ['leaver']))[0]?.status;
    }
    t.equal(status, 'cancelled', 'stored as cancelled');
    chunkDelayMs = 0;
    const next = await stream(hostB.url, { thread_id: 'leaver', agent_id: agent.agent_id, message: 'again ' }, { cookie });
    t.equal(tokensOf(next.events), 're: again ', 'the session is free again');
  });

  t.test('a ticket leaves its line by its key; what a crashed instance left is swept by a job', async (t) => {
    const url = hostA.databaseUrl;
    const agent = await createAgent({ name: 'Swept' });
    const ticket = (expiresIn: string, session = "'swept'") =>
      `INSERT INTO session_turn_queue (session_id, turn_id, instance_id, expires_at, created_at)
       SELECT ${session}, gen_random_uuid(), 'gone', now() + interval '${expiresIn}', now()`;
    // A thousand live tickets of other sessions, and tickets of a crashed instance: lapsed over an hour, and recently.
    await query(url, `${ticket('1 hour', "'other-' || i")} FROM generate_series(1, 1000) i`);
    await query(url, `${ticket('-2 hours')} FROM generate_series(1, 3)`);
    await query(url, ticket('-10 minutes'));
    const [{ id }] = await query<{ id: string }>(url, `${ticket('1 minute')} RETURNING id::text AS id`);
    t.equal(await rowsRead(url, leaveLine('$1'), [id], 'session_turn_queue'), 1, 'leaving reads the ticket alone, not each ticket of every line');
    const lease = (expiresIn: string) =>
      query(
        url,
        `INSERT INTO agent_request_leases (id, agent_id, instance_id, expires_at, created_at) VALUES (gen_random_uuid(), $1, 'gone', now() + interval '${expiresIn}', now())`,
        [agent.agent_id],
      );
    await lease('-1 minute');
    await lease('-1 day');
    await lease('1 minute');

    t.same(await hostA.app.domains.chat.sweepLapsed(), { tickets: 3, leases: 2 }, 'the sweep drops tickets lapsed over an hour ago and expired leases');
    const left = await query(
      url,
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE expires_at < now())::int AS lapsed FROM session_turn_queue WHERE instance_id = 'gone'",
    );
    t.same(left, [{ n: 1002, lapsed: 1 }], 'live tickets stay, and one lapsed less than an hour ago');
    t.same(await query(url, 'SELECT count(*)::int AS n FROM agent_request_leases WHERE expires_at > now()'), [{ n: 1 }], 'the live lease stays');
    t.same(
      await query(url, "SELECT repeat_interval FROM agenda_jobs WHERE name = 'chat:sweep-lapsed'"),
      [{ repeat_interval: '600000' }],
      'the sweep runs as a job every 10 minutes',
    );
    await query(url, "DELETE FROM session_turn_queue WHERE instance_id = 'gone'");
    await query(url, "DELETE FROM agent_request_leases WHERE instance_id = 'gone'");
  });
});
