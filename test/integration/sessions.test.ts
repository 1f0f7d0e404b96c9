import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import pg from 'pg';
import t from 'tap';
import { SessionQueries } from '../../core/src/chat/session-read-store.js';
import { openDatabase } from '../../core/src/db/database.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

t.test('sessions, messages, turns, turn context and the cost overview', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      system_prompt: 'Parcels ship within two days.',
      max_total_requests: 10,
      message_type_response_config: { rule: { enabled: true, response_text: 'Rule accepted.' } },
    })
  ).body;
  await admin.stream({ thread_id: 'alpha', agent_id: agent.agent_id, message: 'When do parcels ship?' });
  await admin.stream({ thread_id: 'alpha', agent_id: agent.agent_id, message: 'x', message_type: 'rule' });
  await admin.stream({ thread_id: 'beta', message: 'unrelated question about weather' });
  await admin.stream({ thread_id: 'gamma', agent_id: agent.agent_id, message: 'hello' });
  await query(host.databaseUrl, "UPDATE chat_sessions SET agent_id = NULL WHERE id = 'gamma'");

  t.test('GET /sessions: envelope, effective agent, filters, cursor', async (t) => {
    const all = await admin.request('GET', '/sessions');
    t.equal(all.status, 200);
    t.same(Object.keys(all.body).sort(), ['items', 'limit', 'next_cursor']);
    t.same(all.body.items.map((s: { session_id: string }) => s.session_id).sort(), ['alpha', 'beta', 'gamma']);
    const gamma = all.body.items.find((s: { session_id: string }) => s.session_id === 'gamma');
    t.same([gamma.agent_id, gamma.agent_name], [agent.agent_id, 'Desk'], 'an unbound session reports the agent of its latest turn');
    const byAgent = await admin.request('GET', `/sessions?agent_id=${agent.agent_id}`);
    t.same(byAgent.body.items.map((s: { session_id: string }) => s.session_id).sort(), ['alpha', 'gamma'], 'agent_id matches binding or latest turn');
    const byText = await admin.request('GET', '/sessions?q=weather');
    t.same(
      byText.body.items.map((s: { session_id: string }) => s.session_id),
      ['beta'],
      'q matches message text',
    );
    const future = await admin.request('GET', `/sessions?date_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    t.same(future.body.items, []);
    const past = await admin.request('GET', `/sessions?date_to=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    t.same([past.status, past.body.items], [200, []], 'date_to before every session finds none');
    const upToNow = await admin.request('GET', `/sessions?date_to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    t.same(upToNow.body.items.map((s: { session_id: string }) => s.session_id).sort(), ['alpha', 'beta', 'gamma'], 'date_to after them finds them all');
    await query(host.databaseUrl, "UPDATE chat_sessions SET created_at = now() - interval '2 days', updated_at = now() - interval '2 days' WHERE id = 'beta'");
    await query(host.databaseUrl, "UPDATE chat_messages SET created_at = now() - interval '2 days' WHERE session_id = 'beta'");
    const yesterday = encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString());
    const older = await admin.request('GET', `/sessions?date_to=${yesterday}`);
    t.same(
      older.body.items.map((s: { session_id: string }) => s.session_id),
      ['beta'],
      'date_to keeps only sessions active before it',
    );
    const newer = await admin.request('GET', `/sessions?date_from=${yesterday}`);
    t.same(newer.body.items.map((s: { session_id: string }) => s.session_id).sort(), ['alpha', 'gamma'], 'and date_from the others');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const pageResponse: { body: { items: { session_id: string }[]; next_cursor: string | null } } = await admin.request(
        'GET',
        `/sessions?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...pageResponse.body.items.map((s) => s.session_id));
      cursor = pageResponse.body.next_cursor;
    } while (cursor);
    t.same(seen.sort(), ['alpha', 'beta', 'gamma'], 'cursor paging visits each session once');
    t.equal((await admin.request('GET', '/sessions?limit=500')).status, 422);
    t.equal((await admin.request('GET', '/sessions?cursor=garbage')).status, 400);
  });

  t.test('messages and turns of a session', async (t) => {
    const messages = await admin.request('GET', '/sessions/alpha/messages');
    t.same(
      messages.body.items.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );
    const turns = await admin.request('GET', '/sessions/alpha/turns');
    t.equal(turns.body.items.length, 2);
    const [fixed, model] = turns.body.items;
    t.same([fixed.response_source, fixed.generation_usage.token_usage_source], ['fixed_response', 'no_model_invocation'], 'newest first');
    t.same([model.response_source, model.model_provider, model.generation_usage.token_usage_source], ['llm_generated', 'offline', 'tokenizer_estimated']);
    t.equal(model.user_message_preview, 'When do parcels ship?');
    t.equal(model.assistant_reply_preview, 'Parcels ship within two days.');
    const first = await admin.request('GET', '/sessions/alpha/turns?limit=1');
    t.same([first.body.items.length, first.body.limit, first.body.items[0].turn_id], [1, 1, fixed.turn_id], 'a page of one, newest first');
    t.type(first.body.next_cursor, 'string');
    const second = await admin.request('GET', `/sessions/alpha/turns?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    t.same(
      [second.body.items.map((x: { turn_id: string }) => x.turn_id), second.body.next_cursor],
      [[model.turn_id], null],
      'the cursor leads to the older turn, and the last page has no cursor',
    );
    t.equal((await admin.request('GET', '/sessions/alpha/turns?cursor=garbage')).status, 400);
    t.equal((await admin.request('GET', '/sessions/nope/turns')).status, 404);
  });

  t.test('turn context needs conversations.read, mcp.read and skills.read', async (t) => {
    const [turn] = (await admin.request('GET', '/sessions/alpha/turns')).body.items.slice(-1);
    const context = await admin.request('GET', `/sessions/alpha/turns/${turn.turn_id}/context`);
    t.equal(context.status, 200);
    t.same(context.body.turn.generation_usage, turn.generation_usage);
    t.equal(context.body.context_payload.model_routing.route_mode, 'single');
    const id = randomUUID();
    await query(host.databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code) VALUES ($1, 'reader', $2, 'sub_admin')", [
      id,
      await hash('reader-password'),
    ]);
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'conversations.read')", [
      randomUUID(),
      id,
    ]);
    const reader = new AdminClient(host.url);
    await reader.login('reader', 'reader-password');
    t.equal((await reader.request('GET', '/sessions/alpha/turns')).status, 200);
    const denied = await reader.request('GET', `/sessions/alpha/turns/${turn.turn_id}/context`);
    t.equal(denied.status, 403);
    t.match(denied.body, { detail: 'missing permission mcp.read', code: 'PERMISSION_MISSING', request_id: String });
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'mcp.read')", [randomUUID(), id]);
    const withoutSkills = await reader.request('GET', `/sessions/alpha/turns/${turn.turn_id}/context`);
    t.match(
      [withoutSkills.status, withoutSkills.body],
      [403, { detail: 'missing permission skills.read', code: 'PERMISSION_MISSING' }],
      'conversations.read and mcp.read without skills.read are refused',
    );
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'skills.read')", [
      randomUUID(),
      id,
    ]);
    t.equal((await reader.request('GET', `/sessions/alpha/turns/${turn.turn_id}/context`)).status, 200, 'all three read permissions are enough');
  });

  t.test('cost overview of the agent', async (t) => {
    const { status, body } = await admin.request('GET', `/agents/${agent.agent_id}/cost-overview`);
    t.equal(status, 200);
    for (const field of [
      'conversation_usage_rollup',
      'evaluation_generation_usage_rollup',
      'evaluation_judge_usage_rollup',
      'conversation_estimated_cost',
      'evaluation_generation_estimated_cost',
      'evaluation_judge_estimated_cost',
      'combined_estimated_cost',
      'active_request_count',
      'total_request_count',
      'remaining_total_requests',
    ]) {
      t.ok(field in body, `has ${field}`);
    }
    t.same(
      [body.conversation_usage_rollup.tokenizer_estimated_count, body.conversation_usage_rollup.no_model_invocation_count],
      [2, 1],
      'two model turns (alpha, gamma) and one fixed response',
    );
    t.same([body.total_request_count, body.remaining_total_requests, body.active_request_count], [2, 8, 0], 'fixed responses do not count');
    t.same(
      [body.conversation_estimated_cost.estimated_interaction_count, body.conversation_estimated_cost.total_cost_usd],
      [2, 0],
      'the offline model is priced at 0',
    );
    t.same(body.combined_estimated_cost, body.conversation_estimated_cost);
  });
});

t.test('GET /sessions?q= matches % and _ literally, needs 3 characters, and runs on trigram indexes', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  await admin.stream({ thread_id: 'offer', message: 'a discount of 50% on item_42' });
  await admin.stream({ thread_id: 'other', message: 'about the weather at 500 metres' });
  const ids = async (q: string) => {
    const response = await admin.request('GET', `/sessions?q=${encodeURIComponent(q)}`);
    t.equal(response.status, 200, `q=${q} is answered`);
    return response.body.items.map((s: { session_id: string }) => s.session_id).sort();
  };
  t.same(await ids('50%'), ['offer'], '% is a character, not "anything": "50%" does not match "500"');
  t.same(await ids('%%%'), [], 'a query of wildcards matches nothing');
  t.same(await ids('m_4'), ['offer'], '_ matches itself');
  t.same(await ids('t_w'), [], '_ is not a wildcard: "t_w" does not find the "t w" of "about the weather"');
  t.same(await ids('ffe'), ['offer'], 'the thread id matches too');
  // Sessions are written in several places (stream, public session start, socket join): the effective agent is
  // derived by Postgres, so a session no turn has touched yet lists under its agent too.
  const desk = (await admin.request('POST', '/agents', { name: 'Desk', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  const issued = (await fetch(`${host.url}/public/agents/${desk.agent_id}/sessions`, { method: 'POST' })).json() as Promise<{ session_id: string }>;
  const byAgent = await admin.request('GET', `/sessions?agent_id=${desk.agent_id}`);
  t.same(
    byAgent.body.items.map((s: { session_id: string; agent_id: string }) => [s.session_id, s.agent_id]),
    [[(await issued).session_id, desk.agent_id]],
    'a session started before any turn lists under its agent',
  );
  const short = await admin.request('GET', '/sessions?q=ab');
  t.equal(short.status, 422, 'shorter than 3 characters is refused');
  t.match(JSON.stringify(short.body), /at least 3 characters/);

  const client = new pg.Client({ connectionString: host.databaseUrl });
  await client.connect();
  t.teardown(() => client.end());
  // Tiny tables are scanned whole whatever the indexes; with scans off, the plan shows which index serves the search.
  await client.query('SET enable_seqscan = off');
  const plan = async (sql: string) => (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
  t.match(
    await plan("SELECT session_id FROM chat_messages WHERE content ILIKE '%weather%'"),
    /chat_messages_content_trgm/,
    'message text is searched through its trigram index',
  );
  t.match(await plan("SELECT id FROM chat_sessions WHERE id ILIKE '%ffe%'"), /chat_sessions_id_trgm/, 'thread ids through theirs');
  t.match(
    await plan(`SELECT id FROM chat_sessions WHERE effective_agent_id = '${randomUUID()}' ORDER BY updated_at DESC, id DESC LIMIT 20`),
    /chat_sessions_effective_agent/,
    'and the agent filter through the stored effective agent',
  );
});

t.test('GET /sessions pages through thousands of sessions by index, with no agent filter too', async (t) => {
  const url = await createTestDatabase(t);
  // One connection, so that the statistics it reports are those of the list's statements.
  const db = openDatabase(url, 1);
  t.teardown(() => db.close());
  const sessions = new SessionQueries(db);
  await query(
    url,
    `INSERT INTO chat_sessions (id, status, created_at, updated_at)
     SELECT 'many-' || lpad(i::text, 4, '0'), 'AI_ACTIVE', now() - interval '1 day', now() - i * interval '1 second' FROM generate_series(1, 3000) i`,
  );
  await query(url, 'ANALYZE chat_sessions');
  const scans = async () => {
    await db.query('SELECT pg_stat_force_next_flush()');
    const [row] = await query<{ n: number }>(url, "SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE relname = 'chat_sessions'");
    return row!.n;
  };
  const before = await scans();
  const first = await sessions.listSessions({ limit: 20 });
  const second = await sessions.listSessions({ limit: 20, cursor: first.next_cursor! });
  const recent = await sessions.listSessions({ limit: 5, date_from: new Date(Date.now() - 60_000) });
  t.equal(await scans(), before, 'no page read the 3,000 sessions whole');
  const ids = (page: { items: { session_id: string }[] }) => page.items.map((s) => s.session_id);
  t.same(
    ids(first),
    Array.from({ length: 20 }, (_, i) => `many-${String(i + 1).padStart(4, '0')}`),
    'the most recently active first',
  );
  t.same(
    ids(second),
    Array.from({ length: 20 }, (_, i) => `many-${String(i + 21).padStart(4, '0')}`),
    'the next page where the first ended',
  );
  t.equal(recent.items.length, 5, 'a date filter pages the same way');
});
