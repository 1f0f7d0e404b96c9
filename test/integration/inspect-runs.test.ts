// Inspect runs (spec 4.8 rule 3, 3.6, 2.6): vector_health counts live points
// and writes back vector_status, counts and vector_verified_at;
// chunking_preview reads parse snapshots only; results keep the filename and
// lose only the document_id when the document is deleted. A document whose
// vectors vanished stays indexed and reachable through the keyword fallback.
import { randomUUID } from 'node:crypto';
import { extensionPoints, type Retriever } from '@agent-host/sdk';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, ingest, uploadOk } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';

const text = (topic: string) => Array.from({ length: 5 }, (_, i) => `${topic} paragraph ${i}: ${'words about the topic '.repeat(10)}`).join('\n\n');

t.test('inspect runs', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const retriever = host.app.kernel.registry(extensionPoints.retrievers).get(host.app.config.knowledge.retriever) as Retriever;
  const source = await createSource(admin, { chunking_params: { chunk_size: 400, chunk_overlap: 0 } });
  const healthy = await uploadOk(admin, source.source_id, { filename: 'healthy.txt', contentType: 'text/plain', data: text('healthy') });
  const damaged = await uploadOk(admin, source.source_id, { filename: 'damaged.txt', contentType: 'text/plain', data: text('damaged') });
  await ingest(admin, source.source_id);
  const pending = await uploadOk(admin, source.source_id, { filename: 'pending.txt', contentType: 'text/plain', data: text('pending') });
  const runs = `/knowledge-sources/${source.source_id}/inspect-runs`;
  const documentOf = async (id: string) => (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${id}`)).body;

  t.test('vector_health checks the indexed documents and writes back what it finds', async (t) => {
    const [row] = await query<{ vector_collection: string }>(host.databaseUrl, 'SELECT vector_collection FROM knowledge_documents WHERE id = $1', [
      damaged.document_id,
    ]);
    await retriever.delete(row!.vector_collection, { ids: [`${damaged.document_id}:0`] });
    const before = await documentOf(damaged.document_id);
    const created = await admin.request('POST', runs, { inspection_mode: 'vector_health' });
    t.equal(created.status, 201);
    t.match(created.body, { inspection_mode: 'vector_health', status: 'completed', summary: { documents_inspected: 2, healthy: 1, unhealthy: 1 } });
    t.same(
      created.body.results.map((r: { document_filename: string }) => r.document_filename).sort(),
      ['damaged.txt', 'healthy.txt'],
      'without document_ids only indexed documents are checked',
    );
    const result = created.body.results.find((r: { document_id: string }) => r.document_id === damaged.document_id);
    t.match(result, {
      outcome: 'unhealthy',
      details: { expected_point_count: before.expected_point_count, actual_point_count: before.expected_point_count - 1, vector_status: 'verification_failed' },
      recommendations: [{ action: 'rebuild_from_snapshot' }],
    });
    const after = await documentOf(damaged.document_id);
    t.match(
      after,
      { vector_status: 'verification_failed', actual_point_count: before.expected_point_count - 1 },
      'vector_status and the count are written back',
    );
    t.not(after.vector_verified_at, before.vector_verified_at, 'and vector_verified_at');
    const rebuilt = await admin.request('POST', `/knowledge-sources/${source.source_id}/documents/${damaged.document_id}/rebuild-from-snapshot`, {});
    t.equal(rebuilt.status, 202, 'following the recommendation');
  });

  t.test('a scoped document not indexed yet stays in the result with run_ingestion', async (t) => {
    const created = await admin.request('POST', runs, { inspection_mode: 'vector_health', document_ids: [pending.document_id, healthy.document_id] });
    const result = created.body.results.find((r: { document_id: string }) => r.document_id === pending.document_id);
    t.match(result, { document_filename: 'pending.txt', outcome: 'not_indexed', recommendations: [{ action: 'run_ingestion' }] });
    t.same(created.body.document_ids.sort(), [pending.document_id, healthy.document_id].sort());
    const foreign = await admin.request('POST', runs, { inspection_mode: 'vector_health', document_ids: [randomUUID()] });
    t.same([foreign.status, foreign.body.detail[0].loc], [422, ['body', 'document_ids', 0]]);
  });

  t.test('chunking_preview reads the snapshots and writes nothing', async (t) => {
    const before = await documentOf(healthy.document_id);
    const chunksBefore = await query(host.databaseUrl, 'SELECT id, content FROM knowledge_chunks WHERE document_id = $1 ORDER BY id', [healthy.document_id]);
    const created = await admin.request('POST', runs, {
      inspection_mode: 'chunking_preview',
      candidate_chunking_strategy: 'recursive_character',
      candidate_chunking_params: { chunk_size: 100, chunk_overlap: 0 },
    });
    t.equal(created.status, 201);
    const preview = created.body.results.find((r: { document_id: string }) => r.document_id === healthy.document_id);
    t.match(preview, {
      outcome: 'previewed',
      details: { current_chunking_strategy: 'recursive_character', current_chunk_count: before.expected_point_count },
      recommendations: [{ action: 'rebuild_from_snapshot', chunking_strategy: 'recursive_character', chunking_params: { chunk_size: 100, chunk_overlap: 0 } }],
    });
    t.ok(preview.details.candidate_chunk_count > before.expected_point_count, 'the candidate makes more, smaller chunks');
    t.ok(preview.details.candidate_max_characters <= 100);
    t.match(
      created.body.results.find((r: { document_id: string }) => r.document_id === pending.document_id),
      { outcome: 'no_snapshot', recommendations: [{ action: 'run_ingestion' }] },
    );
    t.same(await documentOf(healthy.document_id), before, 'no live field changed');
    t.same(
      await query(host.databaseUrl, 'SELECT id, content FROM knowledge_chunks WHERE document_id = $1 ORDER BY id', [healthy.document_id]),
      chunksBefore,
      'no chunk changed',
    );
    const missing = await admin.request('POST', runs, { inspection_mode: 'chunking_preview' });
    t.same([missing.status, missing.body.detail[0].loc], [422, ['body', 'candidate_chunking_strategy']]);
  });

  t.test('history and detail; results keep document_filename after the document is deleted', async (t) => {
    const history = await admin.request('GET', runs);
    t.equal(history.body.items.length, 3, 'three runs so far (refused requests make none), newest first');
    t.equal(history.body.items[0].inspection_mode, 'chunking_preview');
    const first = history.body.items.at(-1);
    await admin.request('DELETE', `/knowledge-sources/${source.source_id}/documents/${healthy.document_id}`);
    const detail = await admin.request('GET', `${runs}/${first.run_id}`);
    const kept = detail.body.results.find((r: { document_filename: string }) => r.document_filename === 'healthy.txt');
    t.match(kept, { document_id: null, document_filename: 'healthy.txt', outcome: 'healthy' });
    t.equal((await admin.request('GET', `${runs}/${randomUUID()}`)).status, 404);
  });

  t.test('a document whose vectors are gone stays indexed and the keyword fallback still serves its chunks', async (t) => {
    const vanished = await uploadOk(admin, source.source_id, {
      filename: 'vanished.txt',
      contentType: 'text/plain',
      data: 'The orchard warehouse holds its stocktake every March.',
    });
    await ingest(admin, source.source_id, { document_ids: [vanished.document_id] });
    const [row] = await query<{ vector_collection: string }>(host.databaseUrl, 'SELECT vector_collection FROM knowledge_documents WHERE id = $1', [
      vanished.document_id,
    ]);
    await retriever.delete(row!.vector_collection, { where: { document_id: vanished.document_id } });
    const created = await admin.request('POST', runs, { inspection_mode: 'vector_health', document_ids: [vanished.document_id] });
    t.match(created.body.results[0], {
      outcome: 'unhealthy',
      details: { actual_point_count: 0, vector_status: 'reindex_required' },
      recommendations: [{ action: 'rebuild_from_snapshot' }],
    });
    t.match(
      await documentOf(vanished.document_id),
      { status: 'indexed', vector_status: 'reindex_required', actual_point_count: 0 },
      'vector_health writes vector_status and leaves status indexed',
    );

    // Threshold 1: every search goes to the keyword fallback, whatever the other documents' vectors score.
    const agent = (
      await admin.request('POST', '/agents', {
        name: 'Stocktake',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        retrieval_config: { score_threshold: 1 },
      })
    ).body;
    await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id });
    await admin.stream({ thread_id: 'vanished-1', agent_id: agent.agent_id, message: 'When is the orchard warehouse stocktake?' });
    const [turn] = (await admin.request('GET', '/sessions/vanished-1/turns')).body.items;
    const context = (await admin.request('GET', `/sessions/vanished-1/turns/${turn.turn_id}/context`)).body;
    t.match(context.context_payload.retrieval, [{ fallback_mode: 'keyword_fallback' }], 'the turn fell back to keywords');
    t.match(
      context.rag_context[0],
      { document_id: vanished.document_id, retrieval_mode: 'keyword_fallback', content: /orchard warehouse holds its stocktake/ },
      'and the fallback serves its chunks until it is rebuilt',
    );
  });
});
