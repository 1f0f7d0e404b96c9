// max_concurrent_requests across two host processes sharing one database.
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcesses } from '../helpers/cli.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase } from '../helpers/services.js';
import { stream } from '../helpers/sse.js';

t.test('a slot taken on host process A is refused on host process B until A finishes', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // Event 0 is the role chunk and 1 the first token; the reply holds before event 2.
  const fixture = await startOpenAiFixture({ respond: () => ({ chunks: ['held ', 'reply'], beforeChunk: (index) => (index === 2 ? gate : undefined) }) });
  t.teardown(() => fixture.close());
  const databaseUrl = await createTestDatabase(t);
  // Both processes start at once: they also race to create the first super admin.
  const [a, b] = (await startHostProcesses(t, databaseUrl, 2, { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` })) as [string, string];
  const admin = new AdminClient(a);
  t.equal((await admin.login()).status, 200);
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'One at a time',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      max_concurrent_requests: 1,
    })
  ).body;

  const held = await fetch(`${a}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agent.agent_id, message: 'first' }),
  });
  const reader = held.body!.getReader();
  t.match(new TextDecoder().decode((await reader.read()).value), /"type":"token"/, 'process A is mid-reply');
  const refused = await stream(b, { agent_id: agent.agent_id, message: 'second' });
  t.same(
    refused.events.map((e) => e.type),
    ['error', 'done'],
    'process B refuses while A holds the only slot',
  );
  t.match(refused.events[0]!.content, /already answering 1 requests/);
  release();
  while (!(await reader.read()).done);
  const served = await stream(b, { agent_id: agent.agent_id, message: 'third' });
  t.notOk(
    served.events.some((e) => e.type === 'error'),
    'after A finishes, B serves',
  );
});
