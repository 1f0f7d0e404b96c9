// A fault of the fault suite (issue 17): a host process killed with SIGKILL in the middle of a chat turn. The turn
// is stored in one transaction when it ends, so nothing of it is half-saved; the session's line (its queue ticket)
// and the agent's request lease lapse with the dead process, so another instance answers the session's next message
// once they do, and the usage counters count only the turn that finished.
import t from 'tap';
import { lastUserText, startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { stream, tokensOf } from '../helpers/sse.js';

t.test('a host killed mid-turn saves nothing of that turn, and the session is answered by another instance', async (t) => {
  let chunkDelayMs = 300;
  const model = await startOpenAiFixture({ respond: (body) => ({ chunks: ['re: ', ...lastUserText(body).split(/(?<= )/)], chunkDelayMs }) });
  t.teardown(() => model.close());
  const databaseUrl = await createTestDatabase(t);
  const env = { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"` };
  const [doomed, survivor] = await Promise.all([startHostProcess(t, databaseUrl, env, 'doomed'), startHostProcess(t, databaseUrl, env, 'survivor')]);
  const admin = new AdminClient(survivor.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Crash desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
    })
  ).body;
  const session = (await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`)).body.session_id as string;

  // The first turn streams slowly from the doomed instance; it is killed once a token has arrived.
  const abort = new AbortController();
  const response = await fetch(`${doomed.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ thread_id: session, agent_id: agent.agent_id, message: 'tell me a long story about parcels and depots and vans ' }),
    signal: abort.signal,
  });
  const reader = response.body!.getReader();
  let seen = '';
  while (!seen.includes('"type":"token"')) seen += new TextDecoder().decode((await reader.read()).value);
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  abort.abort();
  t.pass('killed with SIGKILL while its turn streamed');
  const [queued] = await query<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM session_turn_queue WHERE session_id = $1 AND expires_at > now()', [
    session,
  ]);
  t.equal(queued!.n, 1, "the dead turn's place in the session's line is still held, until its lease lapses");

  chunkDelayMs = 0;
  const started = Date.now();
  const next = await stream(survivor.url, { thread_id: session, agent_id: agent.agent_id, message: 'are you there? ' });
  const waitedMs = Date.now() - started;
  t.equal(tokensOf(next.events), 're: are you there? ', 'the next message is answered by the surviving instance');
  t.ok(waitedMs < 45_000, `once the dead turn's lease lapsed (${Math.round(waitedMs / 1000)} s, the lease is 30 s)`);

  const turns = await query<{ status: string }>(databaseUrl, 'SELECT status FROM conversation_turns WHERE session_id = $1', [session]);
  t.same(
    turns.map((turn) => turn.status),
    ['completed'],
    'one turn stored: the one that finished, once',
  );
  const messages = await query<{ role: string; content: string }>(
    databaseUrl,
    'SELECT role, content FROM chat_messages WHERE session_id = $1 ORDER BY created_at, id',
    [session],
  );
  t.same(
    messages.map((m) => `${m.role}: ${m.content}`),
    ['user: are you there? ', 'assistant: re: are you there? '],
    'nothing of the killed turn was half-saved',
  );
  const overview = (await admin.request('GET', `/agents/${agent.agent_id}/cost-overview`)).body;
  t.match(
    overview,
    { total_request_count: 1, active_request_count: 0, conversation_usage_rollup: { provider_reported_count: 1 } },
    'usage counts the finished turn only, and no lease is left active',
  );
});
