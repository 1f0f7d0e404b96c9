// Every WebSocket broadcast of a session's state change (takeover, system message, manual message, release) goes
// out after the transaction that records it commits: a client that reads the REST view the moment a broadcast
// arrives finds it there (docs/spec-deviations.md, deviation 7, for the customer message of a running turn).
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { WsClient } from '../helpers/ws.js';

t.test('the REST view read on receipt of each takeover broadcast already shows it', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', { name: 'Handover', agent_type: 'chat', public_access_mode: 'public_anonymous', human_takeover_enabled: true })
  ).body;
  const thread = (await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`)).body.session_id as string;
  await admin.stream({ thread_id: thread, agent_id: agent.agent_id, message: 'Hello' });
  const customer = await WsClient.connect(host.url, `/public/ws/${thread}`, { query: { agent_id: agent.agent_id } });
  t.teardown(() => customer.socket.close());
  await customer.waitFor('session');

  // Each broadcast triggers the reads a console would make, at once, from the socket's own handler.
  const checks: Promise<{ type: string; seen: boolean }>[] = [];
  const rest = (pathname: string) => admin.request('GET', pathname).then((r) => r.body);
  customer.socket.on('takeover_event', (payload: { event: { event_id: string } }) => {
    checks.push(
      rest(`/sessions/${thread}/takeover-events`).then((body) => ({
        type: 'takeover_event',
        seen: body.items.some((e: { event_id: string }) => e.event_id === payload.event.event_id),
      })),
    );
  });
  customer.socket.on('system', (payload: { message: { message_id: string } }) => {
    checks.push(rest(`/sessions/${thread}/messages`).then((body) => ({ type: 'system', seen: JSON.stringify(body).includes(payload.message.message_id) })));
  });
  customer.socket.on('message', (payload: { message: { message_id: string; role: string } }) => {
    if (payload.message.role !== 'agent') return;
    checks.push(
      rest(`/sessions/${thread}/messages`).then((body) => ({ type: 'manual message', seen: JSON.stringify(body).includes(payload.message.message_id) })),
    );
  });
  customer.socket.on('session', (payload: { status: string }) => {
    checks.push(
      rest(`/sessions/${thread}/takeover-events`).then((body) => ({
        type: `session ${payload.status}`,
        seen: body.items.some((e: { event_type: string }) => e.event_type === (payload.status === 'HUMAN_ACTIVE' ? 'takeover' : 'release')),
      })),
    );
  });

  t.equal((await admin.request('POST', `/sessions/${thread}/takeover`, {})).status, 200);
  await customer.waitFor('takeover_event', (p) => p.event.event_type === 'takeover');
  t.equal((await admin.request('POST', `/sessions/${thread}/manual-messages`, { content: 'A person here.' })).status, 201);
  await customer.waitFor('takeover_event', (p) => p.event.event_type === 'manual_message');
  t.equal((await admin.request('POST', `/sessions/${thread}/release`, {})).status, 200);
  await customer.waitFor('takeover_event', (p) => p.event.event_type === 'release');

  const results = await Promise.all(checks);
  t.same(
    results.map((r) => r.type).sort(),
    ['manual message', 'session AI_ACTIVE', 'session HUMAN_ACTIVE', 'system', 'system', 'takeover_event', 'takeover_event', 'takeover_event'].sort(),
    'every broadcast was checked',
  );
  for (const result of results) t.ok(result.seen, `${result.type}: in the REST view when its broadcast arrived`);
});
