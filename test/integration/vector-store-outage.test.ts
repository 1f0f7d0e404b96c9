// A fault of the fault suite (issue 17): the vector store (Chroma) becomes unreachable while the host serves. A TCP
// relay between the host and the shared Chroma is cut and restored. While it is cut, readiness says so, chat turns
// still answer from the knowledge through the keyword fallback, and ingestion tries its writes again for
// [knowledge] vector_retry_seconds, marking nothing indexed that it did not write; a store that comes back within
// that time gets the document without anyone ingesting again, and retrieval uses vectors again.
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { createSource, ingest, uploadOk, waitForJob } from '../helpers/knowledge.js';
import { startRelay } from '../helpers/relay.js';
import { chromaUrl } from '../helpers/services.js';

t.test('a vector store that goes away: turns fall back to keyword search, ingestion retries and indexes nothing it did not write', async (t) => {
  const chroma = new URL(chromaUrl());
  const relay = await startRelay({ host: chroma.hostname, port: Number(chroma.port) });
  t.teardown(() => relay.close());
  const relayed = new URL(chroma);
  relayed.port = String(relay.port);
  const retrySeconds = 6;
  const host = await startTestHost(t, {
    env: { CHROMA_URL: relayed.toString().replace(/\/$/, ''), AGENT_HOST__KNOWLEDGE__VECTOR_RETRY_SECONDS: String(retrySeconds) },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Depot handbook' });
  await uploadOk(admin, source.source_id, {
    filename: 'depot.txt',
    contentType: 'text/plain',
    data: 'Parcels leave the depot every morning at seven o clock.\n',
  });
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
  const readiness = await waitFor(
    'readiness to notice',
    () => fetch(`${host.url}/readyz`),
    (r) => r.status === 503,
    15_000,
  );
  t.ok(
    ((await readiness.json()) as { failing: { name: string }[] }).failing.some((f) => f.name === 'chroma'),
    'readiness names chroma',
  );
  const during = await ask('during');
  t.equal(during.events.at(-1)!.type, 'done', 'the turn still ends with done');
  t.equal(during.turn.status, 'completed', 'and completes');
  t.match(during.context.rag_context, [{ retrieval_mode: 'keyword_fallback', content: /seven/ }], 'from the knowledge, by keyword search');
  const late = await uploadOk(admin, source.source_id, { filename: 'late.txt', contentType: 'text/plain', data: 'Late parcels leave at noon.\n' });
  const document = async () => (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${late.document_id}`)).body;
  const started = Date.now();
  const job = await ingest(admin, source.source_id);
  const waited = (Date.now() - started) / 1000;
  t.equal(job.status, 'failed', 'ingestion with the vector store away past vector_retry_seconds fails');
  t.ok(waited >= retrySeconds - 1, `after trying again for the window (${waited.toFixed(1)} s of ${retrySeconds} s)`);
  const stored = await document();
  t.match(stored, { status: 'failed', vector_status: 'reindex_required' }, 'the document it could not write is not marked indexed, nor its vectors');
  t.match(
    stored.error_message,
    /the vector store was away for the \d+ s this document waited \(\[knowledge\] vector_retry_seconds\): cannot reach Chroma/,
    'and says why',
  );

  // Away again when ingestion starts, back within the window: the retries deliver the document, nobody ingests again.
  const retried = await admin.request('POST', `/knowledge-sources/${source.source_id}/ingest`, {});
  await waitFor('the document to be processed', document, (d) => d.status === 'processing', 15_000);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  relay.restore();
  const finished = await waitForJob(admin, retried.body.job_id);
  t.equal(finished.status, 'succeeded', 'the job that met the outage succeeds once the store is back');
  t.match(await document(), { status: 'indexed', vector_status: 'indexed', error_message: null }, 'with the document indexed and its vectors verified');
  await waitFor(
    'readiness to return',
    () => fetch(`${host.url}/readyz`),
    (r) => r.status === 200,
    30_000,
  );
  t.match((await ask('after')).context.rag_context, [{ retrieval_mode: 'vector' }], 'and retrieval uses vectors again');
});
