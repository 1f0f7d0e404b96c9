#!/usr/bin/env node
// Ingestion benchmark: documents and chunks per second end to end, upload -> ingestion job -> indexed with
// verified point counts, on a corpus the bench generates (bench/lib/corpus.mjs, seeded): text, Markdown, HTML,
// CSV, PDF (pdfkit) and DOCX (docx) documents of about `--doc-kb` KiB of text each, in turn, until their bytes
// reach `--mb` MiB.
//   host:   `agent-host start` on a fresh data dir (embedded Postgres and Chroma), default configuration: the
//           local parsers, the feature-hashing embedder, the chroma retriever, the default chunking
//           (recursive_character, 1000 / 150)
//   upload: multipart `POST /knowledge-sources/{id}/documents`, `--upload-concurrency` at a time
//   ingest: `POST /knowledge-sources/{id}/ingest` on each of `--sources` sources (documents dealt out in turn),
//           polled to the end; then every document must be `indexed` with `vector_status=indexed` and
//           `actual_point_count` (counted by the host in Chroma) equal to `expected_point_count`, and Postgres must
//           hold as many chunk rows
// Measured: upload time, ingestion time (request to the last job's end), documents/s, chunks/s, MB/s of
// uploaded bytes and of parsed text, the RSS of the host's node process and of Chroma (sampled every 250 ms;
// peak and after), and the CPU seconds the host's node process (its parse workers included), Chroma and Postgres
// spent while the jobs ran. With `--profile` the host runs under `--cpu-prof` and its hottest functions and
// packages while the jobs ran are printed (`lib/profile.mjs`).
// Run by hand after `npm run build`:
//   node bench/ingest/run.mjs [--mb 10] [--doc-kb 150] [--formats txt,md,html,csv,pdf,docx] [--sources 1]
//                             [--upload-concurrency 4] [--seed 1] [--profile]
// Writes bench/results/ingest.json (and with --profile the host's CPU profile under bench/results/ingest-prof/).
import os from 'node:os';
import { adminClient, adminEnv, eachLimited, ingestAndWait, verifiedCounts } from '../lib/admin.mjs';
import { FORMATS, textGenerator } from '../lib/corpus.mjs';
import { arg, cpuSpent, hostChildMatching, hostCpuSeconds, hostDatabase, machine, rssKiB, runBench, startHost, stopHost } from '../lib/host.mjs';
import { hottest, printHottest, profileClockUs, requestedProfile } from '../lib/profile.mjs';
import { fmt, markdownTable } from '../lib/stats.mjs';

const mb = Number(arg('--mb', 10));
const docKb = Number(arg('--doc-kb', 150));
const formats = String(arg('--formats', Object.keys(FORMATS).join(','))).split(',');
const sources = Number(arg('--sources', 1));
const uploadConcurrency = Number(arg('--upload-concurrency', 4));
const seed = Number(arg('--seed', 1));
const profile = requestedProfile('ingest');
if (
  !(mb > 0) ||
  !(docKb > 0) ||
  formats.some((f) => !FORMATS[f]) ||
  ![sources, uploadConcurrency, seed].every(Number.isInteger) ||
  sources < 1 ||
  uploadConcurrency < 1
) {
  console.error(
    `usage: node bench/ingest/run.mjs [--mb 10] [--doc-kb 150] [--formats ${Object.keys(FORMATS).join(',')}] [--sources 1] [--upload-concurrency 4] [--seed 1] [--profile]`,
  );
  process.exit(2);
}
const ADMIN = { username: 'bench-admin', password: 'bench-ingest-password-0123456789' };
const MiB = 1024 * 1024;
const RSS_INTERVAL_MS = 250;

/** The corpus: documents in the formats in turn until their bytes reach `--mb` MiB. */
async function generateCorpus() {
  const text = textGenerator(seed);
  const documents = [];
  let bytes = 0;
  for (let i = 0; bytes < mb * MiB; i++) {
    const format = formats[i % formats.length];
    const data = await FORMATS[format].write(text, Math.round(docKb * 1024 * (0.5 + text.random())));
    documents.push({ filename: `doc-${String(i).padStart(5, '0')}.${format}`, format, contentType: FORMATS[format].contentType, data });
    bytes += data.byteLength;
  }
  return { documents, bytes };
}

/** Samples the RSS of the given processes until `stop()`; `{peak_mib, last_mib}` for each name. */
function sampleRss(pids) {
  const peaks = Object.fromEntries(Object.keys(pids).map((name) => [name, 0]));
  const take = () => {
    for (const [name, pid] of Object.entries(pids)) peaks[name] = Math.max(peaks[name], (pid && rssKiB(pid)) ?? 0);
  };
  take();
  const timer = setInterval(take, RSS_INTERVAL_MS);
  return {
    stop() {
      clearInterval(timer);
      take();
      return Object.fromEntries(
        Object.entries(pids).map(([name, pid]) => [name, { peak_mib: peaks[name] / 1024, last_mib: ((pid && rssKiB(pid)) ?? 0) / 1024 }]),
      );
    },
  };
}

const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  settings: { mb, doc_kb: docKb, formats, sources, upload_concurrency: uploadConcurrency, seed },
};

async function main() {
  const t0 = performance.now();
  const corpus = await generateCorpus();
  const byFormat = {};
  for (const d of corpus.documents) {
    byFormat[d.format] ??= { documents: 0, bytes: 0 };
    byFormat[d.format].documents++;
    byFormat[d.format].bytes += d.data.byteLength;
  }
  summary.corpus = {
    documents: corpus.documents.length,
    bytes: corpus.bytes,
    mib: corpus.bytes / MiB,
    generate_seconds: (performance.now() - t0) / 1000,
    by_format: byFormat,
  };
  console.log(
    `corpus: ${corpus.documents.length} documents, ${fmt(corpus.bytes / MiB, 2)} MiB (${Object.entries(byFormat)
      .map(([f, s]) => `${f} ${s.documents}`)
      .join(', ')}), generated in ${fmt(summary.corpus.generate_seconds)} s`,
  );

  console.log('starting the host on a fresh data dir ...');
  // At info the host logs each indexed document with the milliseconds of each stage (parse, chunk, embed, database,
  // upsert, verify), summed below.
  const host = await startHost({ name: 'ingest', env: { ...adminEnv(ADMIN), LOG_LEVEL: 'info' }, nodeArgs: profile?.nodeArgs ?? [] });
  summary.host_boot_ms = host.bootMs;
  const chroma = hostChildMatching(host, /chroma/i);
  console.log(`host ${host.url} healthy in ${fmt(host.bootMs / 1000)} s (pid ${host.pid}, Chroma pid ${chroma ?? 'not found'})`);
  const admin = await adminClient(host.url, ADMIN);
  const sourceIds = [];
  for (let i = 0; i < sources; i++) sourceIds.push((await admin.request('POST', '/knowledge-sources', { name: `bench-ingest-${i}` })).source_id);

  const rss = sampleRss({ host: host.pid, chroma });
  const rssBefore = { host_mib: rssKiB(host.pid) / 1024, chroma_mib: chroma ? rssKiB(chroma) / 1024 : null };
  const uploadStart = performance.now();
  await eachLimited(
    corpus.documents.map((d, i) => ({ ...d, sourceId: sourceIds[i % sources] })),
    uploadConcurrency,
    (d) => admin.upload(`/knowledge-sources/${d.sourceId}/documents`, d),
  );
  const uploadSeconds = (performance.now() - uploadStart) / 1000;
  console.log(`uploaded in ${fmt(uploadSeconds, 2)} s; ingesting ...`);

  const ingestStart = performance.now();
  const cpuBefore = hostCpuSeconds(host, chroma);
  const profileFrom = profileClockUs();
  const jobs = await Promise.all(sourceIds.map((id) => ingestAndWait(admin, id)));
  const ingestSeconds = (performance.now() - ingestStart) / 1000;
  const profileWindow = [profileFrom, profileClockUs()];
  const cpuAfter = hostCpuSeconds(host, chroma);
  summary.cpu_seconds = cpuSpent(cpuBefore, cpuAfter);
  const rssDuring = rss.stop();
  const failedJobs = jobs.filter((j) => j.status !== 'succeeded');
  if (failedJobs.length)
    throw new Error(
      `ingestion jobs did not succeed: ${JSON.stringify(failedJobs.map((j) => ({ status: j.status, error: j.error_message, failed: j.document_results.filter((r) => r.status !== 'indexed').slice(0, 3) })))}`,
    );

  let documents = 0;
  let chunks = 0;
  for (const id of sourceIds) {
    const counts = await verifiedCounts(admin, id);
    documents += counts.documents;
    chunks += counts.chunks;
  }
  const db = await hostDatabase(host);
  let chunkRows;
  let parsedChars;
  try {
    chunkRows = (await db.query('SELECT count(*)::int AS n FROM knowledge_chunks')).rows[0].n;
    parsedChars = Number((await db.query('SELECT coalesce(sum(length(text)), 0)::bigint AS n FROM knowledge_parse_snapshots')).rows[0].n);
  } finally {
    await db.end();
  }
  if (documents !== corpus.documents.length || chunkRows !== chunks) {
    throw new Error(
      `verification: ${documents} documents indexed of ${corpus.documents.length} uploaded; ${chunkRows} chunk rows in Postgres for ${chunks} verified points`,
    );
  }
  const serverSeconds = (Math.max(...jobs.map((j) => Date.parse(j.completed_at))) - Math.min(...jobs.map((j) => Date.parse(j.started_at)))) / 1000;
  summary.result = {
    documents,
    chunks,
    chunk_rows_in_postgres: chunkRows,
    parsed_text_mib: parsedChars / MiB,
    upload_seconds: uploadSeconds,
    upload_documents_per_s: documents / uploadSeconds,
    upload_mib_per_s: corpus.bytes / MiB / uploadSeconds,
    ingest_seconds: ingestSeconds,
    ingest_job_seconds: serverSeconds,
    documents_per_s: documents / ingestSeconds,
    chunks_per_s: chunks / ingestSeconds,
    mib_per_s: corpus.bytes / MiB / ingestSeconds,
    parsed_text_mib_per_s: parsedChars / MiB / ingestSeconds,
    end_to_end_seconds: uploadSeconds + ingestSeconds,
    end_to_end_documents_per_s: documents / (uploadSeconds + ingestSeconds),
    end_to_end_chunks_per_s: chunks / (uploadSeconds + ingestSeconds),
    end_to_end_mib_per_s: corpus.bytes / MiB / (uploadSeconds + ingestSeconds),
    rss_before: rssBefore,
    rss: rssDuring,
  };
  summary.stages = stageBreakdown(host.output());
  summary.host_stop = await stopHost(host);
  if (profile) summary.host_cpu_profile = hottest(profile.dir, 10, [profileWindow]);
}

/** The stage times of every `document indexed` line of the host's log, summed: `{stage: seconds}`. */
function stageBreakdown(log) {
  const seconds = {};
  for (const line of log.split('\n')) {
    if (!line.includes('"document indexed"')) continue;
    for (const [stage, ms] of Object.entries(JSON.parse(line).stage_ms ?? {})) seconds[stage] = (seconds[stage] ?? 0) + ms / 1000;
  }
  return seconds;
}

function report() {
  const r = summary.result;
  const table = markdownTable(
    `Ingestion end to end: ${r.documents} documents (${summary.settings.formats.join(', ')}), ${fmt(summary.corpus.mib, 1)} MiB uploaded, ${fmt(r.parsed_text_mib, 1)} MiB of parsed text, ${r.chunks} chunks, ${summary.settings.sources} source(s) (${os.cpus().length} CPUs)`,
    ['phase', 'seconds', 'documents/s', 'chunks/s', 'MiB/s (uploaded)', 'MiB/s (parsed text)'],
    [
      ['upload', fmt(r.upload_seconds, 2), fmt(r.upload_documents_per_s), '-', fmt(r.upload_mib_per_s, 2), '-'],
      ['ingestion job(s)', fmt(r.ingest_seconds, 2), fmt(r.documents_per_s), fmt(r.chunks_per_s), fmt(r.mib_per_s, 2), fmt(r.parsed_text_mib_per_s, 2)],
      ['end to end', fmt(r.end_to_end_seconds, 2), fmt(r.end_to_end_documents_per_s), fmt(r.end_to_end_chunks_per_s), fmt(r.end_to_end_mib_per_s, 2), '-'],
    ],
  );
  const total = Object.values(summary.stages).reduce((a, b) => a + b, 0);
  const stages = markdownTable(
    `Where the ingestion time goes: each document's stages as the host timed them, summed over documents (a job indexes two documents at once, so the stages add up to more than its time; ${summary.settings.sources} job(s))`,
    ['stage', 'seconds', 'share'],
    Object.entries(summary.stages).map(([stage, s]) => [stage, fmt(s, 2), `${fmt((s / total) * 100, 0)} %`]),
  );
  summary.table = table;
  summary.stage_table = stages;
  console.log(`\n${table}\n\n${stages}\n`);
  const cpu = markdownTable(
    `CPU while the jobs ran (${fmt(r.ingest_seconds, 1)} s on ${os.cpus().length} CPUs)`,
    ['process', 'CPU seconds', 'CPU seconds per 1,000 chunks'],
    Object.entries(summary.cpu_seconds).map(([name, s]) => [name, fmt(s, 2), fmt((s / r.chunks) * 1000, 2)]),
  );
  summary.cpu_table = cpu;
  console.log(`${cpu}\n`);
  if (summary.host_cpu_profile) printHottest(summary.host_cpu_profile);
  console.log(`verified: every document indexed, actual_point_count = expected_point_count; ${r.chunk_rows_in_postgres} chunk rows in Postgres`);
  console.log(
    `RSS MiB: host node ${fmt(r.rss_before.host_mib)} before, peak ${fmt(r.rss.host.peak_mib)}, after ${fmt(r.rss.host.last_mib)}; Chroma ${fmt(r.rss_before.chroma_mib)} before, peak ${fmt(r.rss.chroma.peak_mib)}`,
  );
  console.log(`server-side job time ${fmt(r.ingest_job_seconds, 2)} s; host stop: exit ${summary.host_stop?.exit} in ${summary.host_stop?.stop_ms} ms`);
}

await runBench('ingest', { summary, main, report });
process.exit(0);
