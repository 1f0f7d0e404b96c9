// An ingestion job whose host process is killed mid-way is recovered by
// another process and finishes without duplicate vectors. Embeddings come
// from a slow OpenAI-compatible fixture so the kill lands inside the job.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { manyPagePdf } from '../fixtures/many-page-pdf.js';
import { startOpenAiEmbeddingsFixture } from '../fixtures/openai-embeddings-server.js';
import { startHostProcess, type TapLike } from '../helpers/cli.js';
import { AdminClient } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { createSource, uploadOk, waitForJob } from '../helpers/knowledge.js';
import { createTestDatabase, query } from '../helpers/services.js';

/**
 * A fresh database and objects directory, and a way to start host processes on both (as they would share an object
 * store), with a 3 s ingestion lease so a dead process's job is soon claimed again.
 */
async function hostsSharingStorage(t: TapLike, env: Record<string, string>) {
  const databaseUrl = await createTestDatabase(t);
  const objectsDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-objects-'));
  t.teardown(() => rm(objectsDir, { recursive: true, force: true }));
  const start = (name: string) =>
    startHostProcess(
      t,
      databaseUrl,
      {
        AGENT_HOST_INSTANCE_NAME: name,
        AGENT_HOST__OBJECT_STORE__LOCAL_DIR: JSON.stringify(objectsDir),
        AGENT_HOST__KNOWLEDGE__INGESTION_LEASE_SECONDS: '3',
        AGENT_HOST__KNOWLEDGE__INGESTION_SUPERVISOR_INTERVAL_SECONDS: '1',
        ...env,
      },
      name,
    );
  return { databaseUrl, start };
}

t.test('a job killed mid-way with its worker is finished by another host process, without duplicate vectors', async (t) => {
  const fixture = await startOpenAiEmbeddingsFixture({ respond: () => ({ dim: 8, delayMs: 300 }) });
  t.teardown(() => fixture.close());
  const { databaseUrl, start } = await hostsSharingStorage(t, {
    AGENT_HOST__KNOWLEDGE__EMBEDDER: '"openai"',
    AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_BASE_URL: `"${fixture.url}"`,
    AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_DIM: '8',
    AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_BATCH_SIZE: '2',
  });

  const a = await start('worker-a');
  const admin = new AdminClient(a.url);
  await admin.login();
  const source = await createSource(admin, { chunking_params: { chunk_size: 200, chunk_overlap: 0 } });
  const documents = [];
  for (let i = 0; i < 6; i++) {
    const text = Array.from({ length: 4 }, (_, p) => `Document ${i}, paragraph ${p}: ${'a sentence of filler text '.repeat(6)}`).join('\n\n');
    documents.push(await uploadOk(admin, source.source_id, { filename: `doc-${i}.txt`, contentType: 'text/plain', data: text }));
  }
  const job = (await admin.request('POST', `/knowledge-sources/${source.source_id}/ingest`)).body;
  await waitFor(
    'process A to index two documents',
    async () => (await admin.request('GET', `/ingestion-jobs/${job.job_id}`)).body,
    (j) => j.documents_done >= 2,
    60_000,
  );
  a.run.child.kill('SIGKILL');
  await a.run.exit;
  const [stranded] = await query<{ status: string; lease_owner: string; documents_done: number }>(
    databaseUrl,
    'SELECT status, lease_owner, documents_done FROM ingestion_jobs WHERE id = $1',
    [job.job_id],
  );
  t.match(stranded, { status: 'running', lease_owner: /^worker-a-/ }, 'process A died holding the job');
  t.ok(stranded!.documents_done < documents.length, 'with documents left to do');

  const b = await start('worker-b');
  const adminB = new AdminClient(b.url);
  await adminB.login();
  const finished = await waitForJob(adminB, job.job_id, 120_000);
  t.match(finished, { status: 'succeeded', documents_done: documents.length, documents_failed: 0 });
  t.ok(finished.attempt_count >= 2, 'the job was claimed again');
  t.same(new Set(finished.document_results.map((r: { document_id: string }) => r.document_id)).size, documents.length, 'each document has one result');
  const health = (await adminB.request('POST', `/knowledge-sources/${source.source_id}/inspect-runs`, { inspection_mode: 'vector_health' })).body;
  t.match(
    health.summary,
    { documents_inspected: documents.length, healthy: documents.length },
    'every document has exactly its expected points: none missing, none duplicated',
  );
  const chunks = await query<{ document_id: string; n: string; expected: number }>(
    databaseUrl,
    'SELECT d.id AS document_id, count(c.id) AS n, d.expected_point_count AS expected FROM knowledge_documents d LEFT JOIN knowledge_chunks c ON c.document_id = d.id GROUP BY d.id',
  );
  t.ok(
    chunks.every((c) => Number(c.n) === c.expected),
    'and exactly its chunks in Postgres',
  );
});

t.test('a document being parsed when its host was killed twice fails on the next recovery, instead of being parsed into another crash', async (t) => {
  const { databaseUrl, start } = await hostsSharingStorage(t, {
    // A PDF slow enough to parse that each kill lands inside its parse.
    AGENT_HOST__PLUGINS__PARSERS_LOCAL__PDF_MAX_PAGES: '1000000',
    AGENT_HOST__PLUGINS__PARSERS_LOCAL__PARSE_TIMEOUT_SECONDS: '600',
  });

  const a = await start('parser-a');
  const admin = new AdminClient(a.url);
  await admin.login();
  const source = await createSource(admin);
  const slow = await uploadOk(admin, source.source_id, { filename: 'slow.pdf', contentType: 'application/pdf', data: manyPagePdf(300_000) });
  const job = (await admin.request('POST', `/knowledge-sources/${source.source_id}/ingest`)).body;
  const unfinished = async () =>
    (await query<{ unfinished_parses: number }>(databaseUrl, 'SELECT unfinished_parses FROM knowledge_documents WHERE id = $1', [slow.document_id]))[0]!
      .unfinished_parses;
  await waitFor('process A to start parsing slow.pdf', unfinished, (n) => n === 1, 60_000);
  a.run.child.kill('SIGKILL');
  await a.run.exit;
  // One interrupted parse may be an unrelated restart: the next process parses it again.
  const b = await start('parser-b');
  await waitFor('process B to parse slow.pdf again', unfinished, (n) => n === 2, 60_000);
  b.run.child.kill('SIGKILL');
  await b.run.exit;

  const c = await start('parser-c');
  const adminC = new AdminClient(c.url);
  await adminC.login();
  const finished = await waitForJob(adminC, job.job_id, 60_000);
  t.ok(finished.attempt_count >= 3, 'the job was claimed by each process');
  t.match(finished, { status: 'failed', documents_failed: 1 }, 'the document failed instead of being parsed a third time');
  t.match(finished.document_results, [{ document_id: slow.document_id, status: 'failed', error: /^2 earlier parses of this document never finished/ }]);
  const document = (await adminC.request('GET', `/knowledge-sources/${source.source_id}/documents/${slow.document_id}`)).body;
  t.match(document, { status: 'failed', error_message: /ingest the source again to retry it/ }, 'the document says why and how to retry');
  t.equal(await unfinished(), 0, 'and a new ingest would parse it again');
});
