// Retrieval on a small corpus written for it (test/fixtures/knowledge): each
// question must find its document in the top 3, once by vector similarity
// (the offline feature-hashing embedder) and once by the keyword fallback.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, ingest, uploadOk } from '../helpers/knowledge.js';
import { statementsOf } from '../helpers/statements.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/knowledge');
const questions: { question: string; document: string }[] = JSON.parse(await readFile(path.join(fixtures, 'questions.json'), 'utf8'));

t.test('retrieval', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Company handbook', chunking_strategy: 'by_title', chunking_params: { max_characters: 600 } });
  for (const name of await readdir(path.join(fixtures, 'corpus'))) {
    await uploadOk(admin, source.source_id, { filename: name, contentType: 'text/markdown', data: await readFile(path.join(fixtures, 'corpus', name)) });
  }
  const job = await ingest(admin, source.source_id);
  t.equal(job.status, 'succeeded', 'the corpus is ingested');
  const agent = (
    await admin.request('POST', '/agents', { name: 'Helpdesk', agent_type: 'chat', public_access_mode: 'public_anonymous', retrieval_config: { top_k: 3 } })
  ).body;
  await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id });

  t.test('each question retrieves its document in the top 3, by vectors and by the keyword fallback', async (t) => {
    for (const [i, { question, document }] of questions.entries()) {
      await admin.stream({ thread_id: `corpus-${i}`, agent_id: agent.agent_id, message: question });
      const [turn] = (await admin.request('GET', `/sessions/corpus-${i}/turns`)).body.items;
      const context = (await admin.request('GET', `/sessions/corpus-${i}/turns/${turn.turn_id}/context`)).body;
      const vectorDocs = context.rag_context.map((c: { document_filename: string }) => c.document_filename);
      t.ok(
        context.rag_context.length <= 3 && context.rag_context.every((c: { retrieval_mode: string }) => c.retrieval_mode === 'vector'),
        `vector hits only, at most top_k: ${question}`,
      );
      t.ok(vectorDocs.includes(document), `vectors: "${question}" finds ${document} in the top 3 (got ${vectorDocs.join(', ')})`);

      const debug = (await admin.request('POST', `/sessions/corpus-${i}/turns/${turn.turn_id}/rag-debug`, { threshold: 1 })).body;
      const keywordDocs = debug.final_chunks.map((c: { document_filename: string }) => c.document_filename);
      t.equal(debug.keyword_fallback.mode, 'keyword_fallback', `no vector hit reaches threshold 1, so the keyword fallback answers: ${question}`);
      t.ok(keywordDocs.includes(document), `keyword fallback: "${question}" finds ${document} in the top 3 (got ${keywordDocs.join(', ')})`);
      t.ok(
        debug.final_chunks.every((c: { matched_words: string[] }) => c.matched_words.length > 0),
        'each fallback chunk records the words it matched',
      );
    }
  });

  t.test('a source the agent has not mounted is never searched, by vectors or by the keyword fallback', async (t) => {
    const vault = await createSource(admin, { name: 'Vault' });
    await uploadOk(admin, vault.source_id, {
      filename: 'vault.md',
      contentType: 'text/markdown',
      data: '# Vault\n\nThe vault combination is kept by the night porter. The vault combination changes every quarter.',
    });
    await ingest(admin, vault.source_id);
    const question = 'What is the vault combination and who keeps it?';
    const keeper = (
      await admin.request('POST', '/agents', { name: 'Keeper', agent_type: 'chat', public_access_mode: 'public_anonymous', retrieval_config: { top_k: 3 } })
    ).body;
    await admin.request('POST', `/agents/${keeper.agent_id}/mounts`, { source_id: vault.source_id });
    const searched = async (thread: string, agentId: string) => {
      await admin.stream({ thread_id: thread, agent_id: agentId, message: question });
      const [turn] = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items;
      const context = (await admin.request('GET', `/sessions/${thread}/turns/${turn.turn_id}/context`)).body;
      const debug = (await admin.request('POST', `/sessions/${thread}/turns/${turn.turn_id}/rag-debug`, { threshold: 1 })).body;
      return { vector: context.rag_context, candidates: debug.vector_candidates, fallback: debug.final_chunks, mode: debug.keyword_fallback.mode };
    };
    const fromVault = (chunks: { source_id: string }[]) => chunks.filter((c) => c.source_id === vault.source_id);

    // Mounted, the vault source answers the question both ways: the question does reach it.
    const mounted = await searched('vault-mounted', keeper.agent_id);
    t.match(
      mounted.vector[0],
      { source_id: vault.source_id, document_filename: 'vault.md', retrieval_mode: 'vector' },
      'mounted: the vector search finds the vault document',
    );
    t.match(
      mounted.fallback[0],
      { source_id: vault.source_id, document_filename: 'vault.md', retrieval_mode: 'keyword_fallback' },
      'mounted: so does the keyword fallback',
    );

    const unmounted = await searched('vault-unmounted', agent.agent_id);
    t.same(fromVault(unmounted.vector), [], 'not mounted: no vector chunk comes from the vault source');
    t.same(fromVault(unmounted.candidates), [], 'not even among the raw vector candidates');
    t.equal(unmounted.mode, 'keyword_fallback');
    t.same(fromVault(unmounted.fallback), [], 'not mounted: the keyword fallback finds nothing in it either');
    t.ok(
      [...unmounted.vector, ...unmounted.candidates, ...unmounted.fallback].every((c: { source_id: string }) => c.source_id === source.source_id),
      'everything found comes from the mounted source',
    );
  });

  t.test('a word most chunks hold only adds to the score of chunks found by the other words', async (t) => {
    // 600 chunks repeat "parcel" (one chunk each: a paragraph a little shorter than the chunk size); 3 hold "courier"
    // and not "parcel", 1 holds "parcel" and "customs". By ts_rank alone a chunk repeating "parcel" outscores one
    // holding "courier" once.
    const filler = (i: number) => `Parcel parcel parcel, parcel parcel number ${i} waits on the shelf with parcel tape. `.repeat(3).slice(0, 260);
    const paragraphs = Array.from({ length: 600 }, (_, i) => filler(i));
    for (const i of [100, 300, 500])
      paragraphs.splice(
        i,
        0,
        `A damaged box goes back to the courier, who collects it from the desk within two working days of the report ${i}.`.padEnd(260, '.'),
      );
    paragraphs.splice(
      550,
      0,
      'A parcel held at customs is released once the invoice reaches the broker, usually within a week of the request being filed.'.padEnd(260, '.'),
    );
    const depot = await createSource(admin, {
      name: 'Depot',
      chunking_strategy: 'recursive_character',
      chunking_params: { chunk_size: 300, chunk_overlap: 0 },
    });
    await uploadOk(admin, depot.source_id, { filename: 'depot.txt', contentType: 'text/plain', data: paragraphs.join('\n\n') });
    t.equal((await ingest(admin, depot.source_id)).status, 'succeeded');
    const db = new pg.Client({ connectionString: host.databaseUrl });
    await db.connect();
    t.teardown(() => db.end());
    // The job refreshed the statistics that say which words are common before it ended: autovacuum would only within a minute.
    const [stats] = (
      await db.query(
        `SELECT most_common_elems::text::text[] AS common FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'knowledge_chunks' AND attname = 'search_vector'`,
      )
    ).rows;
    t.ok(stats?.common?.includes('parcel'), 'once the job has ended, the statistics know "parcel"');
    const [merged] = (await db.query("SELECT gin_clean_pending_list('knowledge_chunks_search'::regclass) AS pages")).rows;
    t.equal(Number(merged.pages), 0, "and the full-text index holds no pending entries a search would read whole: the job's end merged them");
    const [documents] = (
      await db.query(
        "SELECT (SELECT reltuples FROM pg_class WHERE oid = 'knowledge_documents'::regclass) AS estimated, (SELECT count(*) FROM knowledge_documents) AS actual",
      )
    ).rows;
    t.equal(Number(documents.estimated), Number(documents.actual), "the planner knows how many documents there are (a search's join order depends on it)");
    const porter = (
      await admin.request('POST', '/agents', { name: 'Porter', agent_type: 'chat', public_access_mode: 'public_anonymous', retrieval_config: { top_k: 3 } })
    ).body;
    await admin.request('POST', `/agents/${porter.agent_id}/mounts`, { source_id: depot.source_id });
    await admin.stream({ thread_id: 'depot', agent_id: porter.agent_id, message: 'hello' });
    const [turn] = (await admin.request('GET', '/sessions/depot/turns')).body.items;
    const fallback = async (query: string) =>
      (await admin.request('POST', `/sessions/depot/turns/${turn.turn_id}/rag-debug`, { query, threshold: 1 })).body.final_chunks.map(
        (c: { matched_words: string[] }) => c.matched_words,
      );
    t.same(
      await fallback('parcel courier'),
      [['courier'], ['courier'], ['courier']],
      'the three chunks with "courier", though 600 others repeat "parcel" and outscore them by ts_rank',
    );
    t.same(await fallback('parcel customs'), [['parcel', 'customs']], 'the one chunk with "customs" alone: a chunk holding only a common word is left out');
    const database = new URL(host.databaseUrl).pathname.slice(1);
    // The statements a fallback search sends: `search` (the full-text search), `statistics` (the common words read).
    const searchOf = async (query: string) => {
      let found: string[][] = [];
      const sent = await statementsOf(
        database,
        async () => (found = await fallback(query)),
        (text) => /to_tsquery|to_tsvector|pg_stats/.test(text),
      );
      return { found, sent: sent.map((text) => (text.includes('pg_stats') ? 'statistics' : 'search')) };
    };
    const nowhere = await searchOf('parcel zebra');
    t.same(nowhere.found, [['parcel'], ['parcel'], ['parcel']], 'a question whose uncommon word no chunk holds: any word matching decides');
    t.same(nowhere.sent, ['search', 'search'], 'in a second search, once the first found nothing');
    const courier = await searchOf('parcel courier');
    t.same(courier.sent, ['search'], "a search whose candidates were found is one statement: the common words it was given were still the statistics'");

    await db.query('ANALYZE knowledge_chunks');
    const analyzed = await searchOf('parcel courier');
    t.same(analyzed.sent, ['search', 'statistics', 'search'], 'once analyzed again, the search reads the common words again and runs on them');
    t.same(analyzed.found, [['courier'], ['courier'], ['courier']], 'and finds the same chunks');
    t.same((await searchOf('parcel courier')).sent, ['search'], 'and the search after it does not read them');

    const documentReads = await statementsOf(
      database,
      () => fallback('parcel customs'),
      (text) => text.includes('knowledge_documents'),
    );
    t.same(
      documentReads.map((text) => (text.includes('websearch_to_tsquery') ? 'search' : text.includes('c.id = ANY') ? 'vector hits' : text.slice(0, 80))),
      ['vector hits', 'search'],
      "the fallback reads its chunks' documents in the search itself, not in a statement of their own",
    );
  });
});
