import pg from 'pg';
import t from 'tap';
import { ANNOUNCE_GRACE_MS, HEARTBEAT_INTERVAL_MS } from '../../host/src/ws/peer-relay.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { sleep } from '../helpers/job-counter.js';
import { stream } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

/** socket.io's cluster message type for `serverSideEmit`, the relay between instances. */
const SERVER_SIDE_EMIT = 9;

t.test('session broadcasts reach sockets on other instances, and go through Postgres only when there are any', async (t) => {
  const a = await startTestHost(t);
  const b = await startTestHost(t, { databaseUrl: a.databaseUrl });
  const admin = new AdminClient(a.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Support',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      system_prompt: 'Parcels ship within two days.',
    })
  ).body;

  // Every relay is a NOTIFY on the adapter's channel; this listener sees them all without being an instance itself.
  const listener = new pg.Client({ connectionString: a.databaseUrl });
  await listener.connect();
  t.teardown(() => listener.end());
  const relayed: unknown[] = [];
  listener.on('notification', (n) => {
    const message = JSON.parse(n.payload!);
    if (message.type === SERVER_SIDE_EMIT) relayed.push(message.data.packet[1]);
  });
  await listener.query('LISTEN "socket.io#/"');
  const sockets: WsClient[] = [];
  t.teardown(() => sockets.forEach((s) => s.close()));
  /** A session a customer starts on `url`: the server issues its id. */
  const issue = async (url: string) => (await (await fetch(`${url}/public/agents/${agent.agent_id}/sessions`, { method: 'POST' })).json()).session_id as string;
  const customer = async (url: string, sessionId: string) => {
    const socket = await WsClient.connect(url, `/public/ws/${sessionId}`, { query: { agent_id: agent.agent_id } });
    sockets.push(socket);
    await socket.waitFor('session');
    return socket;
  };

  // Past the window in which an instance relays everything, each knows the other only from its heartbeats.
  await sleep(HEARTBEAT_INTERVAL_MS + ANNOUNCE_GRACE_MS + 500);

  t.test('a turn on one instance reaches a socket on the other', async (t) => {
    const session = await issue(b.url);
    const onB = await customer(b.url, session);
    await stream(a.url, { thread_id: session, agent_id: agent.agent_id, message: 'When do parcels ship?' });
    t.equal((await onB.waitFor('message', (m) => m.message.role === 'user')).message.content, 'When do parcels ship?');
    t.equal((await onB.waitFor('message', (m) => m.message.role === 'assistant')).message.content, 'Parcels ship within two days.');
    // B hears the relay on its own connection, so this listener's copy of the same NOTIFY may come a moment later.
    const roles = await eventually(() => (relayed.length >= 2 ? relayed.map((r: any) => r.message.role) : undefined), 'both relays', 5_000, 20);
    t.same(roles, ['user', 'assistant'], 'both went through Postgres');
  });

  t.test('alone, an instance delivers to its own sockets and sends nothing through Postgres', async (t) => {
    await b.stop();
    relayed.length = 0;
    const session = await issue(a.url);
    const onA = await customer(a.url, session);
    await stream(a.url, { thread_id: session, agent_id: agent.agent_id, message: 'When do parcels ship?' });
    t.equal((await onA.waitFor('message', (m) => m.message.role === 'assistant')).message.content, 'Parcels ship within two days.');
    await sleep(500); // a relay sent with the reply would have reached the listener by now
    t.same(relayed, []);
  });
});
