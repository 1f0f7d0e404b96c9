// Issue 16 item 7 through a running host: messages crafted to stall the event loop, sent anonymously to a public
// agent whose MCP mount makes every turn parse identifiers (and re-parse them from history), and a socket that
// floods events. Before the separator rewrite, the 67-character message held the loop for 165 s.
import t from 'tap';
import { trackingStdio } from '../fixtures/mcp/clients.js';
import { startToolHost } from '../helpers/mcp.js';
import { stream } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

t.test('hostile messages to a public agent with an MCP mount leave the host answering', async (t) => {
  const { host, admin } = await startToolHost(t);
  const tracking = (await admin.request('POST', '/mcp-servers', { name: 'Tracking', transport_type: 'stdio', connection_config: trackingStdio() })).body
    .mcp_server_id as string;
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Tracker',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'fixture-model',
    })
  ).body;
  t.equal((await admin.request('POST', `/agents/${agent.agent_id}/mcp-mounts`, { mcp_server_id: tracking })).status, 201);

  // /healthz polled throughout: a stalled event loop shows as one slow answer.
  let slowest = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const started = performance.now();
      await fetch(`${host.url}/healthz`).then((r) => r.arrayBuffer());
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();

  const sixtySeven = `bl ${'#  '.repeat(21)}!`;
  t.equal(sixtySeven.length, 67);
  const first = await fetch(`${host.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agent.agent_id, message: sixtySeven }),
  });
  const session = first.headers.get('x-session-id')!;
  t.match(await first.text(), /"type":"done"/, 'the 67-character message is answered');
  const again = await stream(host.url, { thread_id: session, agent_id: agent.agent_id, message: `bl ${'#  '.repeat(30)}!` });
  t.match(again.events.at(-1), { type: 'done' }, 'a 30-separator one too, with the first re-parsed from history');
  polling = false;
  await poller;
  // Backtracking held the loop for minutes. Five seconds tells that apart from a loaded CI machine, which answered in
  // 560 ms once while a browser test ran beside it (a bound of 500 ms failed on it).
  t.ok(slowest < 5000, `/healthz answered throughout (slowest ${Math.round(slowest)} ms)`);
});

t.test('a socket that floods events is told to wait, not queued without end', async (t) => {
  const { host, admin } = await startToolHost(t);
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      system_prompt: 'Parcels ship within two days.',
    })
  ).body;
  const session = (await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`)).body.session_id as string;
  const customer = await WsClient.connect(host.url, `/public/ws/${session}`);
  t.teardown(() => customer.close());
  await customer.waitFor('session');
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => customer.send('user_message', { content: `message ${i}` })));
  const refused = answers.filter((a) => !a.ok);
  t.ok(refused.length >= 10, `past the bound the events are refused (${refused.length} of 20)`);
  t.match(refused[0], { detail: /too many events in flight \(8\)/ });
  t.match(await customer.waitFor('error', (e) => e.code === 'TOO_MANY_EVENTS'), { detail: /wait for the answers/ }, 'with an error event');
  t.ok(answers.filter((a) => a.ok).length >= 1, 'the events within the bound are answered');
});
