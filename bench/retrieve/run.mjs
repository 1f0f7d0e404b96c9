#!/usr/bin/env node
// Retrieval benchmark: p50/p99 latency of retrieval as the host runs it, through
// `POST /sessions/{id}/turns/{turn_id}/rag-debug` (the retrieval of a chat turn, run again with a given query,
// threshold and top_k), over one mounted source holding 10k, then 100k chunks, in the real Chroma and Postgres.
//   host:   `agent-host start` on a fresh data dir (embedded Postgres and Chroma), default configuration
//           (feature-hashing embedder, chroma retriever, english full-text search); one source chunked
//           `recursive_character` with `--chunk-size` and no overlap, mounted to one chat agent; one /stream turn
//   load:   generated documents (bench/lib/corpus.mjs) of `--doc-chunks` paragraphs of 250 to
//           `--chunk-size` - 10 characters, so the host's own splitter makes one chunk of each; uploaded and
//           ingested by the host's pipeline up to each scale (the second scale adds to the first); every
//           document verified (`actual_point_count` = `expected_point_count`)
//   modes:  vector (`threshold` 0: the vector hits are kept, no fallback) and keyword_fallback (`threshold` 1:
//           no vector hit is kept, so the host runs its vector search and then the Postgres full-text search,
//           as a turn whose vectors miss does), both through rag-debug; keyword_search: the full-text search alone,
//           the host's own `RetrievalStore.keywordSearch` (core/dist) on the host's database, in this process
//   load generator: one client, one request at a time, `--warmup` discarded queries then `--queries` measured
//           per mode and scale; each query is 5 words picked from a loaded paragraph, and the share of queries
//           whose paragraph comes back in the top_k is reported as a sanity check
// Run by hand after `npm run build`:
//   node bench/retrieve/run.mjs [--scales 10000,100000] [--queries 200] [--warmup 20] [--top-k 5]
//                               [--chunk-size 400] [--doc-chunks 2000] [--upload-concurrency 2] [--seed 1]
// Writes bench/results/retrieve.json.
import os from 'node:os';
import { adminClient, adminEnv, eachLimited, ingestAndWait, verifiedCounts } from '../lib/admin.mjs';
import { textGenerator } from '../lib/corpus.mjs';
import { arg, hostChildMatching, hostDatabaseUrl, machine, rssKiB, runBench, startHost, stopHost } from '../lib/host.mjs';
import { hottest, printHottest, profileClockUs, requestedProfile } from '../lib/profile.mjs';
import { seededRandom } from '../lib/random.mjs';
import { fmt, latencySummary, markdownTable } from '../lib/stats.mjs';

const scales = String(arg('--scales', '10000,100000')).split(',').map(Number);
const queries = Number(arg('--queries', 200));
const warmup = Number(arg('--warmup', 20));
const topK = Number(arg('--top-k', 5));
const chunkSize = Number(arg('--chunk-size', 400));
const docChunks = Number(arg('--doc-chunks', 2000));
const uploadConcurrency = Number(arg('--upload-concurrency', 2));
const seed = Number(arg('--seed', 1));
const profile = requestedProfile('retrieve');
const ints = [queries, topK, chunkSize, docChunks, uploadConcurrency, seed, ...scales];
if (
  !ints.every(Number.isInteger) ||
  scales.some((s, i) => s < 1 || (i && s <= scales[i - 1])) ||
  queries < 1 ||
  warmup < 0 ||
  topK < 1 ||
  topK > 50 ||
  chunkSize < 300 ||
  docChunks < 1
) {
  console.error(
    'usage: node bench/retrieve/run.mjs [--scales 10000,100000 (ascending)] [--queries 200] [--warmup 20] [--top-k 5 (1-50)] [--chunk-size 400 (>= 300)] [--doc-chunks 2000] [--upload-concurrency 2] [--seed 1] [--profile]',
  );
  process.exit(2);
}
const ADMIN = { username: 'bench-admin', password: 'bench-retrieve-password-0123456789' };
const QUERY_WORDS = 5;
const MODES = { vector: 0, keyword_fallback: 1 }; // the threshold that makes each

const text = textGenerator(seed);
const pickRandom = seededRandom(seed + 1);
/** A reservoir of loaded paragraphs (uniform over all so far), the queries' sources. */
const reservoir = [];
let paragraphsSeen = 0;
function remember(paragraph) {
  paragraphsSeen++;
  if (reservoir.length < queries + warmup) reservoir.push(paragraph);
  else {
    const j = Math.floor(pickRandom() * paragraphsSeen);
    if (j < reservoir.length) reservoir[j] = paragraph;
  }
}

/** Documents of `docChunks` paragraphs (the last one shorter) adding up to `count` paragraphs. */
function documentsOf(count, firstIndex) {
  const documents = [];
  for (let made = 0, i = firstIndex; made < count; i++) {
    const n = Math.min(docChunks, count - made);
    const paragraphs = Array.from({ length: n }, () => text.paragraph(250, chunkSize - 10));
    paragraphs.forEach(remember);
    documents.push({ filename: `part-${String(i).padStart(4, '0')}.txt`, contentType: 'text/plain', data: new TextEncoder().encode(paragraphs.join('\n\n')) });
    made += n;
  }
  return documents;
}

/** `QUERY_WORDS` distinct words of a paragraph, in their order. */
function queryFrom(paragraph) {
  const words = [...new Set(paragraph.toLowerCase().match(/[a-z]+/g))];
  const picked = new Set();
  while (picked.size < Math.min(QUERY_WORDS, words.length)) picked.add(Math.floor(pickRandom() * words.length));
  return [...picked]
    .sort((a, b) => a - b)
    .map((i) => words[i])
    .join(' ');
}

const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  settings: {
    scales,
    queries,
    warmup,
    top_k: topK,
    chunk_size: chunkSize,
    doc_chunks: docChunks,
    upload_concurrency: uploadConcurrency,
    seed,
    query_words: QUERY_WORDS,
  },
  loads: [],
  points: [],
};

async function main() {
  console.log('starting the host on a fresh data dir ...');
  const host = await startHost({ name: 'retrieve', env: adminEnv(ADMIN), nodeArgs: profile?.nodeArgs });
  summary.host_boot_ms = host.bootMs;
  const chroma = hostChildMatching(host, /chroma/i);
  console.log(`host ${host.url} healthy in ${fmt(host.bootMs / 1000)} s`);
  const admin = await adminClient(host.url, ADMIN);
  const { source_id: sourceId } = await admin.request('POST', '/knowledge-sources', {
    name: 'bench-retrieve',
    chunking_strategy: 'recursive_character',
    chunking_params: { chunk_size: chunkSize, chunk_overlap: 0 },
  });
  const agent = await admin.request('POST', '/agents', {
    name: 'bench-retrieve',
    agent_type: 'chat',
    public_access_mode: 'public_anonymous',
    retrieval_config: { top_k: topK },
  });
  await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: sourceId });
  const thread = `bench-retrieve-${Date.now()}`;
  const turnReply = await fetch(`${host.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: admin.cookie },
    body: JSON.stringify({ thread_id: thread, agent_id: agent.agent_id, message: 'hello' }),
  });
  await turnReply.text();
  const [turn] = (await admin.request('GET', `/sessions/${thread}/turns`)).items;
  const debugRoute = `/sessions/${thread}/turns/${turn.turn_id}/rag-debug`;
  const ragDebug = async (mode, query) => {
    const debug = await admin.request('POST', debugRoute, { query, threshold: MODES[mode], top_k: topK });
    const wanted = mode === 'vector' ? debug.conclusion.code === 'vector_hits' : debug.keyword_fallback.used;
    if (!wanted) throw new Error(`${mode} query "${query}" ran otherwise: ${JSON.stringify(debug.conclusion)}`);
    return debug.final_chunks;
  };
  // The keyword fallback's own statements, as the host sends them (its built store module, a Sequelize pool on the
  // host's database), without the vector search that precedes them in a turn.
  const { Sequelize } = await import('sequelize');
  const { RetrievalStore, queryWords } = await import('../../core/dist/knowledge/retrieval-store.js');
  const db = new Sequelize(hostDatabaseUrl(host), { dialect: 'postgres', logging: false });
  const store = new RetrievalStore(db);
  const keywordSearch = (source, query) => store.keywordSearch('english', [source], queryWords(query), topK);

  /** `[fromUs, toUs]` of each mode's measured queries through the host at the largest scale, for its CPU profile. */
  const profileWindows = {};
  let loaded = 0;
  let documentIndex = 0;
  for (const scale of scales) {
    const documents = documentsOf(scale - loaded, documentIndex);
    documentIndex += documents.length;
    const t0 = performance.now();
    await eachLimited(documents, uploadConcurrency, (d) => admin.upload(`/knowledge-sources/${sourceId}/documents`, d));
    const uploadSeconds = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const job = await ingestAndWait(admin, sourceId);
    const ingestSeconds = (performance.now() - t1) / 1000;
    if (job.status !== 'succeeded')
      throw new Error(
        `ingestion ${job.status}: ${job.error_message ?? JSON.stringify(job.document_results.filter((r) => r.status !== 'indexed').slice(0, 3))}`,
      );
    const counts = await verifiedCounts(admin, sourceId);
    const added = counts.chunks - loaded;
    loaded = counts.chunks;
    const load = {
      scale,
      chunks: counts.chunks,
      documents: counts.documents,
      added_chunks: added,
      upload_seconds: uploadSeconds,
      ingest_seconds: ingestSeconds,
      load_seconds: uploadSeconds + ingestSeconds,
      chunks_per_s: added / (uploadSeconds + ingestSeconds),
      host_rss_mib: rssKiB(host.pid) / 1024,
      chroma_rss_mib: chroma ? rssKiB(chroma) / 1024 : null,
    };
    summary.loads.push(load);
    console.log(
      `${counts.chunks} chunks in ${counts.documents} documents: +${added} loaded in ${fmt(load.load_seconds)} s (upload ${fmt(uploadSeconds)} s, ingestion ${fmt(ingestSeconds)} s, ${fmt(load.chunks_per_s)} chunks/s)`,
    );

    const picked = reservoir.map((paragraph) => ({ paragraph, query: queryFrom(paragraph) }));
    for (const mode of [...Object.keys(MODES), 'keyword_search']) {
      const latencies = [];
      let found = 0;
      let from;
      for (const [i, { paragraph, query }] of picked.entries()) {
        if (i === warmup) from = profileClockUs();
        const started = performance.now();
        const chunks = mode === 'keyword_search' ? await keywordSearch(sourceId, query) : await ragDebug(mode, query);
        const ms = performance.now() - started;
        if (i < warmup) continue;
        latencies.push(ms);
        if (chunks.some((c) => c.content.trim() === paragraph.trim())) found++;
      }
      if (mode !== 'keyword_search') profileWindows[mode] = [from, profileClockUs()];
      const point = { chunks: counts.chunks, mode, ...latencySummary(latencies), found_in_top_k: found / latencies.length };
      summary.points.push(point);
      console.log(
        `  ${mode.padEnd(16)} p50 ${fmt(point.p50_ms, 2).padStart(8)} ms  p99 ${fmt(point.p99_ms, 2).padStart(8)} ms  mean ${fmt(point.mean_ms, 2).padStart(8)} ms  source paragraph in top ${topK}: ${fmt(point.found_in_top_k * 100, 0)} %`,
      );
    }
  }
  await db.close();
  summary.host_stop = await stopHost(host);
  if (profile)
    summary.host_cpu_profile = Object.fromEntries(Object.entries(profileWindows).map(([mode, window]) => [mode, hottest(profile.dir, 10, [window])]));
}

function report() {
  const loads = markdownTable(
    `Loading (upload + ingestion job, verified point counts), ${summary.settings.chunk_size}-character chunks (${os.cpus().length} CPUs)`,
    ['chunks', 'added', 'upload s', 'ingestion s', 'total s', 'chunks/s', 'host RSS MiB', 'Chroma RSS MiB'],
    summary.loads.map((l) => [
      l.chunks,
      l.added_chunks,
      fmt(l.upload_seconds),
      fmt(l.ingest_seconds),
      fmt(l.load_seconds),
      fmt(l.chunks_per_s),
      fmt(l.host_rss_mib),
      fmt(l.chroma_rss_mib),
    ]),
  );
  const latency = markdownTable(
    `Retrieval through POST .../rag-debug (vector, keyword_fallback) and the host's keyword search alone (keyword_search), one client, top_k ${summary.settings.top_k}, ${summary.settings.queries} queries of ${QUERY_WORDS} words per point`,
    ['chunks', 'mode', 'p50 ms', 'p99 ms', 'mean ms', 'max ms', `paragraph in top ${summary.settings.top_k}`],
    summary.points.map((p) => [
      p.chunks,
      p.mode,
      fmt(p.p50_ms, 2),
      fmt(p.p99_ms, 2),
      fmt(p.mean_ms, 2),
      fmt(p.max_ms, 2),
      `${fmt(p.found_in_top_k * 100, 0)} %`,
    ]),
  );
  summary.tables = { loads, latency };
  console.log(`\n${loads}\n\n${latency}\n`);
  console.log(`host stop: exit ${summary.host_stop?.exit} in ${summary.host_stop?.stop_ms} ms`);
  for (const [mode, hot] of Object.entries(summary.host_cpu_profile ?? {})) {
    console.log(`\n${mode} queries at ${summary.points.at(-1).chunks} chunks:`);
    printHottest(hot);
  }
}

await runBench('retrieve', { summary, main, report });
process.exit(0);
