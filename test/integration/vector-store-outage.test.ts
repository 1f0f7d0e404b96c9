// A fault of the fault suite (issue 17): the vector store (Chroma) becomes unreachable while the host serves. A TCP
// relay between the host and the shared Chroma is cut and restored. While it is cut, readiness says so, chat turns
// still answer from the knowledge through the keyword fallback, and ingestion marks nothing indexed that it did not
// write; once it is restored, ingestion indexes and retrieval uses vectors again.
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { createSource, ingest, uploadOk } from '../helpers/knowledge.js';
import { startRelay } from '../helpers/relay.js';
import { chromaUrl } from '../helpers/services.js';

t.test('a vector store that goes away: turns fall back to keyword search, ingestion indexes nothing it did not write', async (t) => {
  const chroma = new URL(chromaUrl());
  const relay = await startRelay({ host: chroma.hostname, port: Number(chroma.port) });
  t.teardown(() => relay.close());
  const relayed = new URL(chroma);
  relayed.port = String(relay.port);
  const host = await startTestHost(t, { env: { CHROMA_URL: relayed.toString().replace(/\/$/, '') } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Depot handbook' });
  await uploadOk(admin, source.source_id, { filename: 'depot.txt', contentType: 'text/plain', data: 'Parcels leave the depot every morning at seven o clock.\n' });
  t.equal((await ingest(admin, source.source_id)).status, 'succeeded', 'indexed while the vector store answers');
  const agent = (await admin.request('POST', '/agents', { name: 'Depot desk', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id });
  const ask = async (thread: string) => {
    const { events } = await admin.stream({ thread_id: thread, agent_id: agent.agent_id, message: 'When do parcels leave the depot?' });
    const [turn] = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items;
    const context = (await admin.request('GET', `/sessions/${thread}/turns/${turn.turn_id}/context`)).body;
    return { events, turn, context };
  };
  t.match((await ask('before')).context.rag_context, [{ retrieval_mode: 'vector', content: /seven/ }], 'retrieval uses vectors while it can');

  relay.cut();
  const readiness = await waitFor('readiness to notice', () => fetch(`${host.url}/readyz`), (r) => r.status === 503, 15_000);
  t.ok(((await readiness.json()) as { failing: { name: string }[] }).failing.some((f) => f.name === 'chroma'), 'readiness names chroma');
  const during = await ask('during');
  t.equal(during.events.at(-1)!.type, 'done', 'the turn still ends with done');
  t.equal(during.turn.status, 'completed', 'and completes');
  t.match(during.context.rag_context, [{ retrieval_mode: 'keyword_fallback', content: /seven/ }], 'from the knowledge, by keyword search');
  const late = await uploadOk(admin, source.source_id, { filename: 'late.txt', contentType: 'text/plain', data: 'Late parcels leave at noon.\n' });
  const job = await ingest(admin, source.source_id);
  t.not(job.status, 'succeeded', `ingestion without the vector store does not succeed (${job.status})`);
  const stored = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${late.document_id}`)).body;
  t.not(stored.status, 'indexed', 'the document it could not write is not marked indexed');
  t.not(stored.vector_status, 'indexed', 'nor are its vectors');

  relay.restore();
  await waitFor('readiness to return', () => fetch(`${host.url}/readyz`), (r) => r.status === 200, 30_000);
  t.equal((await ingest(admin, source.source_id)).status, 'succeeded', 'ingesting again indexes the document once the vector store is back');
  const indexed = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${late.document_id}`)).body;
  t.match(indexed, { status: 'indexed', vector_status: 'indexed' }, 'with its vectors verified');
  t.match((await ask('after')).context.rag_context, [{ retrieval_mode: 'vector' }], 'and retrieval uses vectors again');
});
