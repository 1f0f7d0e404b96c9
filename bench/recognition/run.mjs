#!/usr/bin/env node
// Document-recognition benchmark, in one run on one machine:
//   fake model: ../stream/fake-model.mjs (OpenAI-compatible; its `fusion_output` answer fills `name` and `total`)
//   host:       `agent-host start` on a fresh data dir; a published fusion agent on the fake model registered as a
//               runtime agent; `--callers` callers each upload a generated invoice PDF (examples/invoice.mjs, 1 and
//               20 pages) to POST /document-recognition/runs?wait_seconds=120 for `--seconds`: runs per minute, and
//               the time from upload to a reviewable run (p50, p99); the host process's RSS sampled throughout
//   floor:      this script doing the same work in-process with nothing stored: pdf.js reads every page's text,
//               renders the first 3 pages as 1000-pixel-wide PNGs on @napi-rs/canvas, asks the fake model for the
//               fields and parses them, with the same callers
//   reviews:    16 reviewers, each PATCHing the fields of a run of its own (every PATCH an effective change, so one
//               ledger revision each) for `--seconds`, against the floor of the same transaction sent straight to
//               the host's Postgres by 16 pg clients (lock the field, append the revision, update the field)
// Run by hand after `npm run build`:
//   node bench/recognition/run.mjs [--seconds 20] [--callers 2]
// Writes bench/results/recognition.json.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCanvas } from '@napi-rs/canvas';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { invoicePdf } from '../../examples/invoice.mjs';
import { adminClient, adminEnv } from '../lib/admin.mjs';
import { arg, hostDatabase, machine, rssKiB, runBench, sleep, startHelper, startHost } from '../lib/host.mjs';
import { fmt, latencySummary, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(arg('--seconds', 20));
const callers = Number(arg('--callers', 2));
const REVIEWERS = 16;
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
if (!(seconds > 0) || !(callers > 0)) {
  console.error('usage: node bench/recognition/run.mjs [--seconds N] [--callers N]');
  process.exit(2);
}
const standardFontDataUrl = path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts') + path.sep;

const DEFINITION = {
  instructions: 'Extract the invoice fields.',
  input_slots: [{ name: 'document', kind: 'file', accepted_content_types: ['application/pdf'] }],
  output_slots: [
    {
      name: 'fields',
      kind: 'structured_json',
      structured_output_profile: 'document_field_set',
      structured_output_schema: { type: 'object', required: ['name', 'total'], properties: { name: { type: 'string' }, total: { type: 'number' } } },
    },
  ],
};

/** `callers` loops of `call` for `seconds`: completions per minute and latency. */
async function load(concurrency, call) {
  const latencies = [];
  const until = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (Date.now() < until) {
        const t0 = performance.now();
        await call(lane);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  return { per_minute: (latencies.length / elapsed) * 60, per_second: latencies.length / elapsed, ...latencySummary(latencies) };
}

/** The host process's RSS, sampled every 200 ms while `work` runs: the largest, in MiB. */
async function withRss(pid, work) {
  let max = 0;
  const timer = setInterval(() => (max = Math.max(max, rssKiB(pid) ?? 0)), 200);
  try {
    const result = await work();
    return { ...result, host_rss_max_mib: max / 1024 };
  } finally {
    clearInterval(timer);
  }
}

/** The floor's work on one PDF: every page's text, 3 previews, one model call, the JSON parsed. */
async function floorRecognition(data, modelUrl) {
  const pdf = await getDocument({ data: new Uint8Array(data), isEvalSupported: false, verbosity: 0, standardFontDataUrl }).promise;
  const pages = [];
  for (let n = 1; n <= pdf.numPages; n++) {
    const page = await pdf.getPage(n);
    pages.push((await page.getTextContent()).items.map((item) => item.str ?? '').join(' '));
    if (n <= 3) {
      const base = page.getViewport({ scale: 1 });
      const viewport = page.getViewport({ scale: 1000 / base.width });
      const canvas = createCanvas(Math.floor(viewport.width), Math.floor(viewport.height));
      await page.render({ canvasContext: canvas.getContext('2d'), viewport, canvas }).promise;
      canvas.toBuffer('image/png');
    }
  }
  await pdf.destroy();
  const res = await fetch(`${modelUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [
        { role: 'system', content: 'Extract the invoice fields.' },
        { role: 'user', content: pages.join('\n\n') },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'fusion_output', strict: false, schema: {} } },
    }),
  });
  let text = '';
  for (const line of (await res.text()).split('\n')) if (line.startsWith('data: {')) text += JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '';
  JSON.parse(text);
}

const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  seconds,
  callers,
  reviewers: REVIEWERS,
  host_rss_idle_mib: null,
  documents: [],
  reviews: null,
};

await runBench('recognition', {
  summary,
  async main() {
    const fake = await startHelper(path.join(here, '../stream/fake-model.mjs'));
    const modelUrl = `http://127.0.0.1:${fake.port}/v1`;
    const host = await startHost({
      name: 'recognition',
      env: {
        ...adminEnv(ADMIN),
        OPENAI_API_KEY: 'bench-key',
        'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': JSON.stringify(modelUrl),
        // Every upload comes from this one address: the per-address budget is measured, never hit.
        AGENT_HOST__DOCUMENT_RECOGNITION__ANONYMOUS_RUNS_PER_MINUTE: '0',
      },
    });
    const admin = await adminClient(host.url, ADMIN);
    const agent = await admin.request('POST', '/agents', {
      name: 'Recognition bench',
      agent_type: 'fusion',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      fusion_definition: DEFINITION,
    });
    await admin.request('POST', `/agents/${agent.agent_id}/publish`);
    await admin.request('PUT', `/admin/document-recognition/runtime-agents/${agent.agent_id}`);
    summary.host_rss_idle_mib = rssKiB(host.pid) / 1024;
    let token;
    const runIds = [];
    const upload = async (pdf) => {
      const form = new FormData();
      form.append('runtime_agent_id', agent.agent_id);
      form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'invoice.pdf');
      const res = await fetch(`${host.url}/document-recognition/runs?wait_seconds=120`, {
        method: 'POST',
        body: form,
        headers: token ? { 'x-caller-token': token } : {},
      });
      const run = await res.json();
      if (res.status !== 201 || run.status !== 'succeeded' || run.field_count !== 2) throw new Error(`run: ${res.status} ${JSON.stringify(run).slice(0, 400)}`);
      token ??= run.caller_token;
      runIds.push(run.run_id);
    };
    for (const pages of [1, 20]) {
      const pdf = await invoicePdf({ pages });
      await upload(pdf); // warm-up: the render and parse workers start
      await floorRecognition(pdf, modelUrl);
      const hostRuns = await withRss(host.pid, () => load(callers, () => upload(pdf)));
      const floor = await load(callers, () => floorRecognition(pdf, modelUrl));
      const row = { pages, pdf_bytes: pdf.byteLength, host: hostRuns, floor, ratio: ratio(hostRuns.per_minute, floor.per_minute) };
      summary.documents.push(row);
      console.log(
        `${pages} page(s): host ${fmt(hostRuns.per_minute)} runs/min (to reviewable p50 ${fmt(hostRuns.p50_ms)} ms, p99 ${fmt(hostRuns.p99_ms)} ms, RSS max ${fmt(hostRuns.host_rss_max_mib)} MiB); ` +
          `floor ${fmt(floor.per_minute)}/min (p50 ${fmt(floor.p50_ms)} ms); ${fmt(row.ratio, 2)}x`,
      );
    }

    // Reviews: each reviewer its own run, every PATCH a new value (one revision each).
    const mine = runIds.slice(0, REVIEWERS);
    while (mine.length < REVIEWERS) mine.push(runIds[mine.length % runIds.length]);
    let n = 0;
    const patch = async (lane) => {
      const field = n % 2 ? 'name' : 'total';
      const value = field === 'name' ? `Reviewed ${n++}` : n++;
      const res = await fetch(`${host.url}/document-recognition/runs/${mine[lane]}/field-reviews/${field}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-caller-token': token },
        body: JSON.stringify({ value, reviewer_identity: { display_name: `reviewer ${lane}` } }),
      });
      const body = await res.json();
      if (res.status !== 200 || !body.revision_appended) throw new Error(`review: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    };
    const clients = await Promise.all(Array.from({ length: REVIEWERS }, () => hostDatabase(host)));
    let m = 0;
    const floorPatch = async (lane) => {
      const client = clients[lane];
      const field = m % 2 ? 'name' : 'total';
      const value = JSON.stringify(field === 'name' ? `Floor ${m++}` : m++);
      await client.query('BEGIN');
      const { rows } = await client.query('SELECT * FROM document_recognition_fields WHERE run_id = $1 AND field_id = $2 FOR UPDATE', [mine[lane], field]);
      const row = rows[0];
      await client.query(
        `INSERT INTO document_recognition_field_revisions (id, run_id, field_id, revision_number, value, review_status, reviewer_note, previous_value,
           previous_review_status, previous_reviewer_note, changed, reviewer_identity, created_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, 'corrected', NULL, $5, $6, NULL, '["value"]', '{"display_name":"floor"}', now())`,
        [mine[lane], field, row.revision_count + 1, value, JSON.stringify(row.current_value), row.current_review_status],
      );
      await client.query(
        `UPDATE document_recognition_fields SET current_value = $3, current_review_status = 'corrected', revision_count = revision_count + 1,
           last_revised_at = now(), last_revised_by = '{"display_name":"floor"}' WHERE run_id = $1 AND field_id = $2`,
        [mine[lane], field, value],
      );
      await client.query('COMMIT');
    };
    await sleep(500);
    const hostReviews = await withRss(host.pid, () => load(REVIEWERS, patch));
    const floorReviews = await load(REVIEWERS, floorPatch);
    await Promise.all(clients.map((client) => client.end()));
    summary.reviews = { host: hostReviews, floor: floorReviews, ratio: ratio(hostReviews.per_second, floorReviews.per_second) };
    console.log(
      `reviews (16 reviewers): host ${fmt(hostReviews.per_second)} PATCH/s (p50 ${fmt(hostReviews.p50_ms)} ms, p99 ${fmt(hostReviews.p99_ms)} ms); ` +
        `floor ${fmt(floorReviews.per_second)}/s; ${fmt(summary.reviews.ratio, 2)}x`,
    );
  },
  report() {
    console.log(`host RSS before the first upload: ${fmt(summary.host_rss_idle_mib)} MiB`);
    for (const r of summary.documents)
      console.log(
        `${r.pages} page(s): ${fmt(r.host.per_minute)} vs ${fmt(r.floor.per_minute)} runs/min = ${fmt(r.ratio, 2)}x of the floor; ` +
          `to a reviewable run p50 ${fmt(r.host.p50_ms)} ms, p99 ${fmt(r.host.p99_ms)} ms; host RSS max ${fmt(r.host.host_rss_max_mib)} MiB`,
      );
    const { host, floor, ratio: r } = summary.reviews;
    console.log(`reviews: ${fmt(host.per_second)} vs ${fmt(floor.per_second)} PATCH/s = ${fmt(r, 2)}x of the floor; p99 ${fmt(host.p99_ms)} ms`);
  },
});
process.exit(0);
