// Ingestion jobs (spec 4.8, 2.6, 3.6): parse -> snapshot -> chunk -> embed ->
// Chroma -> verify, with progress, document statuses that never stay waiting
// after a failure, idempotent re-runs, rebuilds from the parse snapshot, and
// recovery of a job whose worker stopped renewing its lease.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { extensionPoints, type Embedder, type Retriever } from '@agent-host/sdk';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { createSource, ingest, uploadOk, waitForJob } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';

/** The vector store collection a document's points were written to. */
const collectionOf = async (databaseUrl: string, documentId: string) =>
  (await query<{ vector_collection: string }>(databaseUrl, 'SELECT vector_collection FROM knowledge_documents WHERE id = $1', [documentId]))[0]!
    .vector_collection;

const DROPS_POINT_PLUGIN = fileURLToPath(new URL('../fixtures/plugins/retriever-drops-point', import.meta.url));
const paragraphs = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `Paragraph ${i} about ${topic}: ${'lorem ipsum dolor sit amet '.repeat(8)}`).join('\n\n');

t.test('ingestion jobs', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST__KNOWLEDGE__INGESTION_SUPERVISOR_INTERVAL_SECONDS: '1' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const retriever = host.app.kernel.registry(extensionPoints.retrievers).get(host.app.config.knowledge.retriever) as Retriever;
  const points = async (documentId: string) => retriever.count(await collectionOf(host.databaseUrl, documentId), { document_id: documentId });
  const chunkRows = async (documentId: string) =>
    (await query(host.databaseUrl, 'SELECT id FROM knowledge_chunks WHERE document_id = $1', [documentId])).length;
  const source = await createSource(admin, { chunking_params: { chunk_size: 300, chunk_overlap: 0 } });
  const good = await uploadOk(admin, source.source_id, { filename: 'good.txt', contentType: 'text/plain', data: paragraphs('shipping', 6) });
  const broken = await uploadOk(admin, source.source_id, { filename: 'broken.pdf', contentType: 'application/pdf', data: 'this is not a PDF' });

  t.test('a job reports progress and each document its status, vector_status and point counts', async (t) => {
    const started = await admin.request('POST', `/knowledge-sources/${source.source_id}/ingest`);
    t.equal(started.status, 202);
    t.match(started.body, { source_id: source.source_id, job_kind: 'ingest', status: 'queued', documents_total: 2, documents_done: 0 });
    const job = await waitForJob(admin, started.body.job_id);
    t.match(job, { status: 'partially_failed', documents_total: 2, documents_done: 2, documents_failed: 1, progress: 1, attempt_count: 1 });
    t.ok(job.completed_at && job.started_at, 'start and end are recorded');
    t.match(
      job.document_results.find((r: { document_id: string }) => r.document_id === broken.document_id),
      { status: 'failed', filename: 'broken.pdf', error: /broken\.pdf/ },
    );
    const indexed = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${good.document_id}`)).body;
    t.match(indexed, { status: 'indexed', vector_status: 'indexed', chunking_strategy: 'recursive_character' });
    t.ok(indexed.expected_point_count > 1, 'the document was split into several chunks');
    t.equal(indexed.actual_point_count, indexed.expected_point_count, 'the verified count equals the expected one');
    t.type(indexed.vector_verified_at, 'string');
    t.equal(await points(good.document_id), indexed.expected_point_count, 'Chroma holds one point per chunk');
    t.equal(await chunkRows(good.document_id), indexed.expected_point_count, 'Postgres holds the chunks for the keyword fallback');
    const embedder = host.app.kernel.registry(extensionPoints.embedders).get(host.app.config.knowledge.embedder) as Embedder;
    const [vector] = await embedder.embed(['shipping']);
    const stored = await retriever.query(await collectionOf(host.databaseUrl, good.document_id), {
      vector: vector!,
      topK: 100,
      where: { document_id: good.document_id },
    });
    t.equal(stored.length, indexed.expected_point_count, 'every point is found');
    t.same(
      stored.map((p) => [p.document, p.metadata]),
      stored.map(() => ['', { document_id: good.document_id }]),
      "the vector store holds vectors and the document's id only: a chunk's text and metadata are read from Postgres",
    );
    const failed = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${broken.document_id}`)).body;
    t.match(
      failed,
      { status: 'failed', vector_status: 'reindex_required', error_message: /broken\.pdf/ },
      'a failed document holds a terminal vector_status, never a waiting one',
    );
    const list = await admin.request('GET', `/knowledge-sources/${source.source_id}/ingestion-jobs`);
    t.same(
      list.body.items.map((j: { job_id: string }) => j.job_id),
      [job.job_id],
    );
  });

  t.test('running a document again leaves one set of points; without force only documents not indexed are taken', async (t) => {
    const again = await ingest(admin, source.source_id);
    t.same(again.document_ids, [broken.document_id], 'only the document that is not indexed');
    const forced = await ingest(admin, source.source_id, { force: true, document_ids: [good.document_id] });
    t.equal(forced.status, 'succeeded');
    const document = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${good.document_id}`)).body;
    t.equal(await points(good.document_id), document.expected_point_count, 'no duplicate points after a second run');
    t.equal(await chunkRows(good.document_id), document.expected_point_count, 'no duplicate chunks');
    const foreign = await admin.request('POST', `/knowledge-sources/${source.source_id}/ingest`, { document_ids: [randomUUID()] });
    t.same([foreign.status, foreign.body.detail[0].loc], [422, ['body', 'document_ids', 0]]);
    t.equal((await admin.request('GET', `/ingestion-jobs/${randomUUID()}`)).status, 404);
  });

  t.test('one job at a time per source', async (t) => {
    const other = await createSource(admin, { name: 'Busy' });
    await query(
      host.databaseUrl,
      "INSERT INTO ingestion_jobs (id, source_id, job_kind, status, document_ids, documents_total) VALUES ($1, $2, 'ingest', 'queued', '[]', 0)",
      [randomUUID(), other.source_id],
    );
    const refused = await admin.request('POST', `/knowledge-sources/${other.source_id}/ingest`);
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /still queued or running/);
  });

  t.test('rebuild from the parse snapshot, with another chunking', async (t) => {
    const before = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${good.document_id}`)).body;
    const started = await admin.request('POST', `/knowledge-sources/${source.source_id}/documents/${good.document_id}/rebuild-from-snapshot`, {
      chunking_strategy: 'recursive_character',
      chunking_params: { chunk_size: 120, chunk_overlap: 0 },
    });
    t.equal(started.status, 202);
    const job = await waitForJob(admin, started.body.job_id);
    t.match(job, { job_kind: 'rebuild_from_snapshot', status: 'succeeded', chunking_params: { chunk_size: 120, chunk_overlap: 0 } });
    const after = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${good.document_id}`)).body;
    t.ok(after.expected_point_count > before.expected_point_count, 'smaller chunks, more of them');
    t.same(after.chunking_params, { chunk_size: 120, chunk_overlap: 0 }, 'the document records the chunking it was indexed with');
    t.equal(await points(good.document_id), after.expected_point_count, 'the old points were replaced, not added to');
    const fresh = await uploadOk(admin, source.source_id, { filename: 'fresh.txt', contentType: 'text/plain', data: 'not parsed yet' });
    t.equal(
      (await admin.request('POST', `/knowledge-sources/${source.source_id}/documents/${fresh.document_id}/rebuild-from-snapshot`, {})).status,
      409,
      'no snapshot, no rebuild',
    );
    const bad = await admin.request('POST', `/knowledge-sources/${source.source_id}/documents/${good.document_id}/rebuild-from-snapshot`, {
      chunking_strategy: 'by_title',
      chunking_params: { max_characters: 10 },
    });
    t.same([bad.status, bad.body.detail[0].loc], [422, ['body', 'chunking_params', 'max_characters']]);
  });

  t.test('a job whose worker stopped renewing its lease is recovered and finishes without duplicates', async (t) => {
    const recovering = await createSource(admin, { name: 'Recovering', chunking_params: { chunk_size: 300, chunk_overlap: 0 } });
    const docs = [];
    for (const topic of ['returns', 'warranty', 'travel'])
      docs.push(await uploadOk(admin, recovering.source_id, { filename: `${topic}.txt`, contentType: 'text/plain', data: paragraphs(topic, 4) }));
    // A first worker indexed the first document, started the second and died: its lease lapsed.
    const first = await ingest(admin, recovering.source_id, { document_ids: [docs[0]!.document_id, docs[1]!.document_id] });
    t.equal(first.status, 'succeeded');
    const jobId = randomUUID();
    await query(
      host.databaseUrl,
      `INSERT INTO ingestion_jobs (id, source_id, job_kind, status, document_ids, documents_total, documents_done, document_results, attempt_count, lease_owner, lease_expires_at, worker_heartbeat_at, started_at)
       VALUES ($1, $2, 'ingest', 'running', $3, 3, 1, $4, 1, 'dead-worker', now() - interval '1 minute', now() - interval '2 minutes', now() - interval '3 minutes')`,
      [
        jobId,
        recovering.source_id,
        JSON.stringify(docs.map((d) => d.document_id)),
        JSON.stringify([{ document_id: docs[0]!.document_id, filename: 'returns.txt', status: 'indexed' }]),
      ],
    );
    await query(host.databaseUrl, "UPDATE knowledge_documents SET status = 'processing', vector_status = 'pending_verification' WHERE id = $1", [
      docs[1]!.document_id,
    ]);
    const job = await waitForJob(admin, jobId);
    t.match(
      job,
      { status: 'succeeded', attempt_count: 2, documents_done: 3, documents_failed: 0 },
      'the supervisor queued it again and another claim finished it',
    );
    t.same(
      job.document_results.map((r: { document_id: string }) => r.document_id).sort(),
      docs.map((d) => d.document_id).sort(),
      'the done document was not run again: one result per document (the other two ran side by side, in either order)',
    );
    for (const doc of docs) {
      const row = (await admin.request('GET', `/knowledge-sources/${recovering.source_id}/documents/${doc.document_id}`)).body;
      t.match(row, { status: 'indexed', vector_status: 'indexed' });
      t.equal(await points(doc.document_id), row.expected_point_count, `${doc.filename}: one point per chunk, no duplicates`);
    }
  });

  t.test('a job interrupted too often fails and leaves no document waiting', async (t) => {
    const doomed = await createSource(admin, { name: 'Doomed' });
    const doc = await uploadOk(admin, doomed.source_id, { filename: 'doomed.txt', contentType: 'text/plain', data: 'text' });
    await query(host.databaseUrl, "UPDATE knowledge_documents SET status = 'processing', vector_status = 'pending_verification' WHERE id = $1", [
      doc.document_id,
    ]);
    const jobId = randomUUID();
    await query(
      host.databaseUrl,
      `INSERT INTO ingestion_jobs (id, source_id, job_kind, status, document_ids, documents_total, attempt_count, lease_owner, lease_expires_at)
       VALUES ($1, $2, 'ingest', 'running', $3, 1, 3, 'dead-worker', now() - interval '1 minute')`,
      [jobId, doomed.source_id, JSON.stringify([doc.document_id])],
    );
    const job = await waitForJob(admin, jobId);
    t.match(job, { status: 'failed', error_message: /interrupted 3 times/ });
    const row = await waitFor(
      'the document released',
      async () => (await admin.request('GET', `/knowledge-sources/${doomed.source_id}/documents/${doc.document_id}`)).body,
      (d) => d.status === 'failed',
      5000,
    );
    t.match(row, { status: 'failed', vector_status: 'reindex_required' });
  });
});

t.test('a document whose vector store comes up a point short fails verification with both counts recorded', async (t) => {
  // The real Chroma, through a fixture retriever that loses the last point of every write.
  const host = await startTestHost(t, {
    env: {
      AGENT_HOST__PLUGINS__ENABLED: JSON.stringify(['models-langchain', 'orchestrator-core-chat', 'parsers-local', 'embedders', DROPS_POINT_PLUGIN]),
      AGENT_HOST__KNOWLEDGE__RETRIEVER: JSON.stringify('chroma-drops-point'),
    },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { chunking_params: { chunk_size: 300, chunk_overlap: 0 } });
  const doc = await uploadOk(admin, source.source_id, { filename: 'short.txt', contentType: 'text/plain', data: paragraphs('inventory', 6) });
  const job = await ingest(admin, source.source_id);
  t.match(job, { status: 'failed', documents_failed: 1 }, 'the job fails: its one document did not verify');
  t.match(
    job.document_results[0],
    { document_id: doc.document_id, status: 'failed', error: /holds \d+ points for this document, expected \d+/ },
    'the job result says why',
  );
  const row = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${doc.document_id}`)).body;
  t.match(row, { status: 'failed', vector_status: 'verification_failed' }, 'the document is failed with verification_failed, not indexed');
  t.ok(row.expected_point_count > 1, `the expected count is the chunk count (${row.expected_point_count})`);
  t.equal(row.actual_point_count, row.expected_point_count - 1, 'the actual count is what the store holds, one short');
  t.type(row.vector_verified_at, 'string', 'the time of the check is recorded');
  t.match(row.error_message, `holds ${row.actual_point_count} points for this document, expected ${row.expected_point_count}`, 'and so does the document');
  const retriever = host.app.kernel.registry(extensionPoints.retrievers).get('chroma-drops-point') as Retriever;
  t.equal(
    await retriever.count(await collectionOf(host.databaseUrl, doc.document_id), { document_id: doc.document_id }),
    row.actual_point_count,
    'Chroma holds the recorded actual count',
  );
});
