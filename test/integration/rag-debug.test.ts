// POST /sessions/{session_id}/turns/{turn_id}/rag-debug (spec 4.4): the turn's
// retrieval run again with overridable query, threshold and top_k, needing
// only conversations.read.
import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, ingest, uploadOk } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';
import { statementsOf } from '../helpers/statements.js';

t.test('rag-debug', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Logistics', chunking_strategy: 'by_title' });
  await uploadOk(admin, source.source_id, {
    filename: 'shipping.md',
    contentType: 'text/markdown',
    data: '# Shipping\n\nParcels ship within two business days. Every parcel gets a tracking number.',
  });
  const returns = await uploadOk(admin, source.source_id, {
    filename: 'returns.md',
    contentType: 'text/markdown',
    data: '# Returns\n\nItems may be returned within thirty days for a refund.',
  });
  await ingest(admin, source.source_id);
  /** A public chat agent with the source mounted. */
  const mountedAgent = async (name: string, retrievalConfig: { top_k: number; score_threshold: number }) => {
    const created = (
      await admin.request('POST', '/agents', { name, agent_type: 'chat', public_access_mode: 'public_anonymous', retrieval_config: retrievalConfig })
    ).body;
    await admin.request('POST', `/agents/${created.agent_id}/mounts`, { source_id: source.source_id });
    return created;
  };
  const agent = await mountedAgent('Desk', { top_k: 1, score_threshold: 0 });
  const bare = (await admin.request('POST', '/agents', { name: 'Bare', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  await admin.stream({ thread_id: 'debug-1', agent_id: agent.agent_id, message: 'How fast do parcels ship?' });
  await admin.stream({ thread_id: 'debug-2', agent_id: bare.agent_id, message: 'How fast do parcels ship?' });
  const turnOf = async (thread: string) => (await admin.request('GET', `/sessions/${thread}/turns`)).body.items[0].turn_id as string;
  const turn = await turnOf('debug-1');
  const debugPath = `/sessions/debug-1/turns/${turn}/rag-debug`;

  t.test('defaults come from the turn: its agent, its retrieval_config and its text', async (t) => {
    const debug = (await admin.request('POST', debugPath)).body;
    t.match(debug, { agent_id: agent.agent_id, query: 'How fast do parcels ship?', top_k: 1, threshold: 0, conclusion: { code: 'vector_hits' } });
    t.same(
      debug.mounted_sources.map((s: { name: string }) => s.name),
      ['Logistics'],
    );
    t.equal(debug.final_chunks.length, 1, 'top_k from the agent');
    t.match(debug.final_chunks[0], {
      document_filename: 'shipping.md',
      retrieval_mode: 'vector',
      source_name: 'Logistics',
      source_kind: 'standard',
      source_priority: 0,
      document_origin: 'upload',
    });
    t.match(debug.final_chunks[0].content, /Parcels ship within two business days/, "a vector hit's text is the stored chunk's");
    t.same(
      debug.final_chunks[0].metadata,
      { headings: 'Shipping' },
      "and its metadata the chunk's (its section's title; a page number only where the format has pages)",
    );
    t.match(debug.vector_candidates[0].content_preview, /Parcels ship/, 'candidates preview the stored chunk');
    t.ok(debug.vector_candidates.length >= 2, 'raw candidates are listed beyond the final chunks');
    t.ok(
      debug.vector_candidates.some((c: { excluded_reason: string | null }) => c.excluded_reason === 'beyond_top_k'),
      'and say why they were left out',
    );
    t.equal(debug.keyword_fallback.used, false);
  });

  t.test('query, threshold and top_k are overridable; a missed threshold falls back to keywords with the matched words', async (t) => {
    const debug = (await admin.request('POST', debugPath, { query: 'refund for returned items', threshold: 0.99, top_k: 2 })).body;
    t.match(debug, { query: 'refund for returned items', top_k: 2, threshold: 0.99, conclusion: { code: 'keyword_fallback_hits' } });
    t.ok(
      debug.vector_candidates.every((c: { excluded_reason: string }) => c.excluded_reason === 'below_threshold'),
      'every vector candidate is below the threshold',
    );
    t.match(debug.keyword_fallback, { used: true, mode: 'keyword_fallback', reason: /no vector hit scored at least 0.99/ });
    t.ok(debug.keyword_fallback.matched_words.includes('refund'), 'the matched words are recorded');
    t.match(debug.final_chunks[0], { document_filename: 'returns.md', retrieval_mode: 'keyword_fallback' });
    const none = (await admin.request('POST', debugPath, { query: 'zebra xylophone', threshold: 0.99 })).body;
    t.match(none, { final_chunks: [], conclusion: { code: 'no_hits' } });
    const invalid = await admin.request('POST', debugPath, { top_k: 0 });
    t.same([invalid.status, invalid.body.detail[0].loc], [422, ['body', 'top_k']]);
  });

  t.test('an agent without mounts, and an unknown turn', async (t) => {
    const debug = (await admin.request('POST', `/sessions/debug-2/turns/${await turnOf('debug-2')}/rag-debug`)).body;
    t.match(debug, { mounted_sources: [], final_chunks: [], conclusion: { code: 'no_mounted_sources' } });
    t.equal((await admin.request('POST', `/sessions/debug-1/turns/${randomUUID()}/rag-debug`)).status, 404);
  });

  t.test('conversations.read is enough', async (t) => {
    const id = randomUUID();
    await query(host.databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code) VALUES ($1, 'viewer', $2, 'sub_admin')", [
      id,
      await hash('viewer-password'),
    ]);
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'conversations.read')", [
      randomUUID(),
      id,
    ]);
    const viewer = new AdminClient(host.url);
    await viewer.login('viewer', 'viewer-password');
    t.equal((await viewer.request('POST', debugPath)).status, 200);
    t.equal((await viewer.request('GET', '/knowledge-sources')).status, 403, 'while knowledge itself stays closed');
  });

  t.test("a turn reads the chunks of the vector hits that reach its threshold only; rag-debug reads every candidate's", async (t) => {
    const strict = await mountedAgent('Strict', { top_k: 2, score_threshold: 0.99 });
    const chunkReads = (work: () => Promise<unknown>) =>
      statementsOf(new URL(host.databaseUrl).pathname.slice(1), work, (text) =>
        /FROM knowledge_chunks c JOIN knowledge_documents d .* WHERE c\.id = ANY/s.test(text),
      );
    const reads = await chunkReads(() => admin.stream({ thread_id: 'strict-1', agent_id: strict.agent_id, message: 'refund for returned items' }));
    const strictTurn = await turnOf('strict-1');
    const context = (await admin.request('GET', `/sessions/strict-1/turns/${strictTurn}/context`)).body;
    t.match(
      context.context_payload.retrieval,
      [{ fallback_mode: 'keyword_fallback', vector_candidate_count: Number }],
      'no hit reached 0.99: the keyword fallback answered',
    );
    t.ok(context.context_payload.retrieval[0].vector_candidate_count > 0, 'though the vector search found candidates');
    t.match(context.rag_context, [{ document_filename: 'returns.md', retrieval_mode: 'keyword_fallback' }]);
    t.same(reads, [], 'and the turn read none of their chunks');
    const kept = await chunkReads(() => admin.stream({ thread_id: 'strict-2', agent_id: agent.agent_id, message: 'How fast do parcels ship?' }));
    t.equal(kept.length, 1, 'a turn whose hits reach its threshold reads their chunks, in one statement');
    let debug: { vector_candidates: { content_preview: string; excluded_reason: string }[] } = { vector_candidates: [] };
    const debugReads = await chunkReads(async () => (debug = (await admin.request('POST', `/sessions/strict-1/turns/${strictTurn}/rag-debug`)).body));
    t.equal(debugReads.length, 1, 'rag-debug of the same turn reads the candidates');
    t.ok(
      debug.vector_candidates.every((c) => c.excluded_reason === 'below_threshold' && c.content_preview.length > 0),
      'and shows each with its text, below the threshold',
    );
  });

  t.test('a vector hit whose chunk is no longer stored is listed with its document, and left out', async (t) => {
    // As while a document is indexed again: its points are still in the vector store, its chunk rows gone.
    await query(host.databaseUrl, 'DELETE FROM knowledge_chunks WHERE document_id = $1', [returns.document_id]);
    const debug = (await admin.request('POST', debugPath, { query: 'Items may be returned within thirty days for a refund.', threshold: 0, top_k: 2 })).body;
    const gone = debug.vector_candidates.filter((c: { excluded_reason: string | null }) => c.excluded_reason === 'document_not_indexed');
    t.ok(gone.length > 0, "the returns document's point is a candidate left out");
    t.match(
      gone,
      gone.map(() => ({ document_id: returns.document_id, document_filename: null, chunk_index: null, kept: false })),
      "named by the document in its point's id",
    );
    t.notOk(
      debug.final_chunks.some((c: { document_id: string }) => c.document_id === returns.document_id),
      'and nothing of that document is handed on',
    );
  });
});
