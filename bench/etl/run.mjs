#!/usr/bin/env node
// ETL benchmark: one job end to end on a generated `--rows`-row, 10-column CSV, against the floor, in one run:
//   host:  `agent-host start` on a fresh data dir; an etl agent on the zero-latency fake model (../stream/fake-model.mjs,
//          which answers the plan request with prose, so etl_mapper plans by names and value types); the job is made
//          with a multipart upload and polled until it succeeds; rows/s is the rows over the time from the start of the
//          upload to the job's end (upload, the check of the source, the plan, the conversion and the stored output),
//          and the host process's RSS is sampled while it runs
//   floor: this script streaming the same file through csv-parse and csv-stringify (the libraries the host uses) from
//          disk to disk, with no conversion, before and after the host; the floor is the mean of the two
// Run by hand after `npm run build`:
//   node bench/etl/run.mjs [--rows 1000000] [--profile]
// Writes bench/results/etl.json (and with --profile the host's CPU profile under bench/results/etl-prof/, its
// hottest functions printed).
import { createReadStream, createWriteStream, openAsBlob, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { arg, machine, rssKiB, runBench, sleep, startHelper, startHost } from '../lib/host.mjs';
import { adminClient, adminEnv } from '../lib/admin.mjs';
import { hottest, printHottest, requestedProfile } from '../lib/profile.mjs';
import { fmt, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const rows = Number(arg('--rows', 1_000_000));
const profile = requestedProfile('etl');
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
if (!Number.isInteger(rows) || rows < 1) {
  console.error('usage: node bench/etl/run.mjs [--rows N] [--profile]');
  process.exit(2);
}

const HEADER = ['Customer Id', 'Full Name', 'E-mail', 'Signup (dd/mm/yyyy)', 'Country', 'Amount', 'Active', 'Tier', 'Phone', 'Notes'];
const SCHEMA = [
  'name,type,required,allowed_values',
  'customer_id,integer,yes,',
  'name,string,yes,',
  'email,string,yes,',
  'signup_date,date,no,',
  'country,string,no,',
  'amount,decimal,no,',
  'active,boolean,no,',
  'tier,enum,no,gold|silver|bronze',
  'phone,string,no,',
  'notes,string,no,',
].join('\n');

/** Writes the source CSV: `rows` rows of the ten columns, some dates, amounts and flags in the shapes exports have. */
async function writeSource(file) {
  const out = createWriteStream(file);
  const tiers = ['Gold', 'silver', 'BRONZE'];
  out.write(`${HEADER.join(',')}\n`);
  for (let i = 0; i < rows; i++) {
    const line = `${i},"Person ${i}, Jr",p${i}@example.com,${String((i % 28) + 1).padStart(2, '0')}/${String((i % 12) + 1).padStart(2, '0')}/2025,NL,"$${(i % 1000) + 0.5}",${i % 2 ? 'yes' : 'no'},${tiers[i % 3]},+31 20 ${i},note ${i % 97}\n`;
    if (!out.write(line)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve) => out.end(resolve));
}

const summary = { date: new Date().toISOString(), machine: machine(), rows, columns: HEADER.length };

await runBench('etl', {
  summary,
  async main() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-bench-etl-'));
    try {
      const source = path.join(dir, 'source.csv');
      await writeSource(source);
      summary.source_bytes = statSync(source).size;
      writeFileSync(path.join(dir, 'schema.csv'), SCHEMA);

      // The floor: the same file through the same libraries, disk to disk; timed before and after the host, whose
      // mean is the floor, so a machine that is slower for a while weighs on both sides alike.
      const floorOnce = async () => {
        const started = Date.now();
        await pipeline(createReadStream(source), parse({ bom: true }), stringify(), createWriteStream(path.join(dir, 'floor.csv')));
        return (Date.now() - started) / 1000;
      };
      const floorBefore = await floorOnce();
      console.log(`floor before the host: ${fmt(rows / floorBefore)} rows/s (${fmt(floorBefore, 2)} s)`);

      const fake = await startHelper(path.join(here, '../stream/fake-model.mjs'));
      const host = await startHost({
        name: 'etl',
        env: {
          ...adminEnv(ADMIN),
          OPENAI_API_KEY: 'bench-key',
          'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': JSON.stringify(`http://127.0.0.1:${fake.port}/v1`),
          AGENT_HOST__ETL__MAX_SOURCE_BYTES: String(2 * 1024 * 1024 * 1024),
          LOG_LEVEL: 'info', // for the 'ETL job stored' line and its stage times
        },
        nodeArgs: profile?.nodeArgs,
      });
      const admin = await adminClient(host.url, ADMIN);
      const agent = await admin.request('POST', '/agents', { name: 'ETL bench', agent_type: 'etl', model_provider: 'openai', model_name: 'gpt-4o-mini' });
      const rss = [];
      const sampler = setInterval(() => rss.push({ at: Date.now(), kib: rssKiB(host.pid) }), 250);
      const started = Date.now();
      const form = new FormData();
      // A file-backed Blob: the upload streams from disk, as curl -F would.
      form.append('source_csv', await openAsBlob(source, { type: 'text/csv' }), 'source.csv');
      form.append('target_schema_csv', new Blob([SCHEMA], { type: 'text/csv' }), 'schema.csv');
      const made = await fetch(`${host.url}/agents/${agent.agent_id}/etl-jobs`, { method: 'POST', headers: { cookie: admin.cookie }, body: form });
      const uploaded = Date.now();
      if (made.status !== 201) throw new Error(`upload: ${made.status} ${await made.text()}`);
      const job = await made.json();
      let done;
      for (;;) {
        done = await admin.request('GET', `/agents/${agent.agent_id}/etl-jobs/${job.job_id}`);
        if (done.status === 'succeeded' || done.status === 'failed') break;
        await sleep(200);
      }
      clearInterval(sampler);
      if (done.status !== 'succeeded') throw new Error(`the job failed: ${JSON.stringify(done.error)}`);
      const seconds = (Date.now() - started) / 1000;
      const sorted = rss
        .filter((s) => s.kib !== null)
        .map((s) => s.kib)
        .sort((a, b) => a - b);
      const maxMiB = (samples) => Math.max(...samples.filter((s) => s.kib !== null).map((s) => s.kib)) / 1024;
      summary.host = {
        seconds,
        rows_per_s: rows / seconds,
        // From the start of the upload to the stored job: receiving the files, the check, and storing them.
        upload_seconds: (Date.parse(done.created_at) - started) / 1000,
        conversion_seconds: (Date.parse(done.completed_at) - Date.parse(done.started_at)) / 1000,
        // The check of the source and the storing of the files, as the host logged them; the rest of the upload is receiving.
        stored_stage_ms: host
          .output()
          .split('\n')
          .map((line) => (line.includes('"ETL job stored"') ? JSON.parse(line).stage_ms : undefined))
          .find(Boolean),
        rows_written: done.report.rows_written,
        cells_coerced: done.report.cells_coerced,
        plan: done.plan.planned_by,
        rss_mib: {
          p50: sorted[sorted.length >> 1] / 1024,
          max: sorted.at(-1) / 1024,
          // The upload's (receiving, the check, storing) and the job's (plan, conversion, stored output) peaks apart.
          upload_max: maxMiB(rss.filter((s) => s.at <= uploaded)),
          job_max: maxMiB(rss.filter((s) => s.at > uploaded)),
          samples: sorted.length,
        },
      };
      const floorAfter = await floorOnce();
      console.log(`floor after the host: ${fmt(rows / floorAfter)} rows/s (${fmt(floorAfter, 2)} s)`);
      summary.floor = { seconds: (floorBefore + floorAfter) / 2, runs_seconds: [floorBefore, floorAfter] };
      summary.floor.rows_per_s = rows / summary.floor.seconds;
      summary.ratio_host_floor = ratio(summary.host.rows_per_s, summary.floor.rows_per_s);
      console.log(
        `host: ${fmt(summary.host.rows_per_s)} rows/s end to end (${fmt(seconds, 1)} s; upload and check ${fmt(summary.host.upload_seconds, 1)} s, ` +
          `conversion ${fmt(summary.host.conversion_seconds, 1)} s; stored after ${JSON.stringify(summary.host.stored_stage_ms)} ms), ` +
          `RSS p50 ${fmt(summary.host.rss_mib.p50)} MiB, max ${fmt(summary.host.rss_mib.max)} MiB (upload ${fmt(summary.host.rss_mib.upload_max)}, job ${fmt(summary.host.rss_mib.job_max)}); ${fmt(summary.ratio_host_floor, 2)}x the floor`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  report() {
    if (profile) printHottest((summary.host_cpu_profile = hottest(profile.dir)));
    console.log(
      `\n${rows} rows x ${HEADER.length} columns (${fmt(summary.source_bytes / 1048576)} MiB): host ${fmt(summary.host.rows_per_s)} rows/s vs floor ` +
        `${fmt(summary.floor.rows_per_s)} rows/s = ${fmt(summary.ratio_host_floor, 2)}x (target >= 0.5x); host RSS max ${fmt(summary.host.rss_mib.max)} MiB`,
    );
  },
});
process.exit(0);
