// The demo gateway (spec 6.4, [demo_gateway] enabled): a front end sends user_message on /demo and gets ai_response
// events (token, error, done), each message a POST /stream turn of a public_anonymous agent as an anonymous caller.
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { WsClient } from '../helpers/ws.js';

const host = await startTestHost(t, { env: { DEMO_GATEWAY_ENABLED: 'true' } });
const admin = new AdminClient(host.url);
await admin.login();
const createAgent = async (fields: Record<string, unknown>) =>
  (await admin.request('POST', '/agents', { agent_type: 'chat', system_prompt: 'Parcels ship within two days.', ...fields })).body;
const agent = await createAgent({ name: 'Demo desk', public_access_mode: 'public_anonymous' });
const internal = await createAgent({ name: 'Internal desk', public_access_mode: 'admin_only' });
const sockets: WsClient[] = [];
t.teardown(() => sockets.forEach((socket) => socket.close()));
const connect = async (query: Record<string, string>) => {
  const client = await WsClient.connect(host.url, '/demo', { query });
  sockets.push(client);
  return client;
};
const refusal = (query: Record<string, string>) =>
  connect(query).then(
    () => 'connected',
    (error: Error) => error.message,
  );
/** The answer to the `n`th message (from 1): its tokens joined, its errors, and its done. */
async function answer(client: WsClient, n: number) {
  await client.waitFor('ai_response', () => client.of('ai_response').filter((r) => r.kind === 'done').length >= n);
  const all = client.of('ai_response');
  const ends = all.flatMap((r, i) => (r.kind === 'done' ? [i] : []));
  const own = all.slice(n === 1 ? 0 : ends[n - 2]! + 1, ends[n - 1]! + 1);
  return {
    text: own
      .filter((r) => r.kind === 'token')
      .map((r) => r.content)
      .join(''),
    errors: own.filter((r) => r.kind === 'error'),
    done: own.at(-1),
  };
}

t.test('a handshake names the agent, and only an active public_anonymous one', async (t) => {
  t.match(await refusal({}), /agent_id is required/, 'no agent');
  t.match(await refusal({ agent_id: internal.agent_id }), /not an active public_anonymous agent/, 'an admin-only agent');
  t.match(await refusal({ agent_id: '00000000-0000-4000-8000-000000000000' }), /not an active public_anonymous agent/, 'an unknown agent, refused alike');
  t.match(await refusal({ agent_id: agent.agent_id, session_id: 'made-up' }), /session made-up not found/, 'a session the host did not issue');
});

t.test('messages stream back as tokens and done, in one session the socket keeps, which a new socket resumes', async (t) => {
  const client = await connect({ agent_id: agent.agent_id });
  client.socket.emit('user_message', { content: 'When do parcels ship?' });
  const first = await answer(client, 1);
  t.equal(first.text, 'Parcels ship within two days.', 'the reply, token by token');
  t.same(first.errors, [], 'no error');
  t.type(first.done.session_id, 'string', 'done names the session');
  t.type(first.done.turn_id, 'string', 'and the turn');
  t.ok(client.of('ai_response').filter((r) => r.kind === 'token').length >= 2, 'more than one token event');

  client.socket.emit('user_message', { content: 'And on Sundays?' });
  const second = await answer(client, 2);
  t.equal(second.done.session_id, first.done.session_id, 'the second message goes on in the same session');
  const { body: session } = await admin.request('GET', `/sessions/${first.done.session_id}/messages`);
  t.equal(session.items.length, 4, 'both turns are stored in it, as POST /stream stores them');

  const resumed = await connect({ agent_id: agent.agent_id, session_id: first.done.session_id });
  resumed.socket.emit('user_message', { content: 'Thanks' });
  t.equal((await answer(resumed, 1)).done.session_id, first.done.session_id, 'a new socket resumes the session by its id');
});

t.test('a refused message is an error then done, and the socket goes on', async (t) => {
  const client = await connect({ agent_id: agent.agent_id });
  client.socket.emit('user_message', { content: '   ' });
  const empty = await answer(client, 1);
  t.match(empty.errors[0], { kind: 'error', code: 'MESSAGE_EMPTY' }, 'an empty message is refused with its code');
  t.equal(empty.done.session_id, null, 'no session was started');
  client.socket.emit('user_message', { text: 'wrong field' });
  t.match((await answer(client, 2)).errors[0], { code: 'VALIDATION_FAILED', content: /content/ }, 'a payload without content names the field');
  client.socket.emit('user_message', { content: 'When do parcels ship?' });
  t.equal((await answer(client, 3)).text, 'Parcels ship within two days.', 'then a good message is answered');

  await admin.request('PATCH', `/agents/${agent.agent_id}`, { public_access_mode: 'admin_only' });
  client.socket.emit('user_message', { content: 'Still there?' });
  t.match((await answer(client, 4)).errors[0], { code: 'AGENT_NOT_PUBLIC' }, 'an agent that stopped being public answers no more');
  await admin.request('PATCH', `/agents/${agent.agent_id}`, { public_access_mode: 'public_anonymous' });
});
