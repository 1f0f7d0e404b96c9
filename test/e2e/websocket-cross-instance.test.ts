// WebSocket fan-out across two host processes sharing one database (the socket.io Postgres adapter).
import t from 'tap';
import { startHostProcesses } from '../helpers/cli.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { WsClient } from '../helpers/ws.js';

t.test('an operator on instance A and a customer on instance B see each other', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const [a, b] = (await startHostProcesses(t, databaseUrl, 2)) as [string, string];
  const admin = new AdminClient(a);
  const login = await admin.login();
  t.equal(login.status, 200);
  const adminId: string = login.body.admin_user_id;
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Two rooms, one session',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      human_takeover_enabled: true,
      system_prompt: 'Returns are free within 30 days.',
    })
  ).body;
  // The customer's session is issued by instance B; its id is the customer's key to it.
  const session = (await (await fetch(`${b}/public/agents/${agent.agent_id}/sessions`, { method: 'POST' })).json()).session_id as string;
  const customer = await WsClient.connect(b, `/public/ws/${session}`);
  const operator = await WsClient.connect(a, `/ws/${session}`, {
    cookie: admin.cookieHeader(),
    query: { role: 'operator', operator_id: adminId, operator_name: 'Alice' },
  });
  t.teardown(() => (customer.close(), operator.close()));
  await customer.waitFor('session');
  await operator.waitFor('session');

  t.same(await customer.send('user_message', { content: 'Are returns free?' }), { ok: true });
  t.equal(
    (await operator.waitFor('message', (m) => m.message.role === 'assistant')).message.content,
    'Returns are free within 30 days.',
    'an AI reply made on B reaches A',
  );

  t.same(await operator.send('agent_takeover'), { ok: true }, 'the operator on A takes over');
  t.match(await customer.waitFor('session', (s) => s.status === 'HUMAN_ACTIVE'), { takeover_owner_id: adminId }, 'the customer on B receives session');
  t.match(await customer.waitFor('system', (s) => s.status === 'HUMAN_ACTIVE'), { event_type: 'takeover' }, 'and system');
  await customer.waitFor('takeover_event');

  t.same(await customer.send('user_message', { content: 'Hello, human?' }), { ok: true });
  await operator.waitFor('message', (m) => m.message.content === 'Hello, human?');
  t.pass("the customer's message on B reaches the operator on A");
  const viaA = await fetch(`${a}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ thread_id: session, agent_id: agent.agent_id, message: 'Sent to A' }),
  });
  t.equal(await viaA.text(), 'data: {"type":"done"}\n\n', 'instance A does not reply either');
  await customer.waitFor('message', (m) => m.message.content === 'Sent to A');
  const [{ n }] = (await query(databaseUrl, 'SELECT count(*)::int AS n FROM conversation_turns WHERE session_id = $1', [session])) as [{ n: number }];
  t.equal(n, 1, 'AI replies stop on both instances: only the turn from before the takeover');

  t.same(await operator.send('user_message', { content: 'Alice here.' }), { ok: true });
  t.match((await customer.waitFor('message', (m) => m.message.role === 'agent')).message, { content: 'Alice here.', sender_name_snapshot: 'Alice' });
  t.same(await operator.send('agent_release'), { ok: true });
  await customer.waitFor('session', (s) => s.status === 'AI_ACTIVE' && s.takeover_released_at !== null);
  await customer.send('user_message', { content: 'Are returns free?' });
  await operator.waitFor('message', () => operator.of('message').filter((m) => m.message.role === 'assistant').length === 2);
  t.pass('after release the AI answers again, across instances');
});
