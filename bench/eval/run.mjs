#!/usr/bin/env node
// Evaluation benchmark: one run of a frozen snapshot of `--items` questions (answer + judge per item) on the
// zero-latency fake model, against the floor, in one run:
//   fake model: ../stream/fake-model.mjs (OpenAI-compatible: 20 streamed tokens per answer, a verdict per judgement)
//   host:       `agent-host start` on a fresh data dir, an agent on the fake model, `[evaluation] item_concurrency`
//               set to `--concurrency`; items/s is the items over the run's started_at to completed_at, and the host
//               process's RSS is sampled while it runs
//   floor:      this script calling the fake model itself, item after item: one streamed answer and one judgement
// Then recovery: a second instance on the first one's Postgres and Chroma; a run is made, the instance that claimed it
// is killed with SIGKILL mid-run, and the time from the kill to the run running again on the other is measured
// (default `[evaluation] run_lease_seconds` 60 and `supervisor_interval_seconds` 10). Run by hand after `npm run build`:
//   node bench/eval/run.mjs [--items 1000] [--concurrency 16] [--recovery-items 300] [--model-delay-ms 0] [--profile]
// Both report the CPU seconds per item of each process (the fake model; the host, its Postgres and Chroma; this script),
// and the ceiling the fake model sets: one single-threaded process, it serves at most 1 s / its CPU per item.
// `--recovery-items 0` skips the recovery. With `--profile` the host runs under `--cpu-prof`, its hottest
// functions while the run ran are printed, and the recovery is skipped (a killed host writes no profile).
// Writes bench/results/eval.json (and with --profile the host's CPU profile under bench/results/eval-prof/).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  arg,
  cpuSeconds,
  cpuSpent,
  hostChildMatching,
  hostCpuSeconds,
  hostDatabase,
  machine,
  rssKiB,
  runBench,
  sleep,
  startHelper,
  startHost,
} from '../lib/host.mjs';
import { adminClient, adminEnv } from '../lib/admin.mjs';
import { hottest, printHottest, profileClockUs, requestedProfile } from '../lib/profile.mjs';
import { fmt, markdownTable, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const items = Number(arg('--items', 1000));
const concurrency = Number(arg('--concurrency', 16));
const recoveryItems = Number(arg('--recovery-items', 300));
// Each model answer waits this long first: 0 is the zero-latency floor of host overhead; a real model takes seconds.
const modelDelayMs = Number(arg('--model-delay-ms', 0));
const profile = requestedProfile('eval');
/** `[fromUs, toUs]` of the run on the first host, for its CPU profile. */
const runWindow = [];
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
if (![items, concurrency].every((n) => Number.isInteger(n) && n > 0) || !(Number.isInteger(recoveryItems) && recoveryItems >= 0) || !(modelDelayMs >= 0)) {
  console.error('usage: node bench/eval/run.mjs [--items N] [--concurrency N] [--recovery-items N] [--model-delay-ms N] [--profile]');
  process.exit(2);
}

/** The p50 and max of RSS samples in KiB, in MiB. */
function mib(samples) {
  const sorted = samples.filter((v) => v !== null).sort((a, b) => a - b);
  return { samples: sorted.length, p50: sorted[sorted.length >> 1] / 1024, max: sorted.at(-1) / 1024 };
}

/** Process, CPU seconds and CPU ms per item, as a markdown table. */
const cpuTable = (caption, spent, n) =>
  markdownTable(
    caption,
    ['process', 'CPU seconds', 'CPU ms per item'],
    Object.entries(spent).map(([name, s]) => [name, fmt(s, 2), fmt((s / n) * 1000, 2)]),
  );

const csvOf = (n) => `question,expected_answer\n${Array.from({ length: n }, (_, i) => `What is item ${i + 1}?,tok0 tok1 tok2`).join('\n')}\n`;

async function frozenSnapshot(admin, n) {
  const dataset = await admin.request('POST', '/evaluation-datasets', { name: `Bench ${n}`, task_type: 'qa' });
  await admin.upload(`/evaluation-datasets/${dataset.dataset_id}/import`, { filename: 'bench.csv', contentType: 'text/csv', data: csvOf(n) });
  return admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/freeze`);
}

/** Polls the run until `done` holds, sampling `sample()` each time. */
async function pollRun(admin, agentId, runId, done, sample = () => {}, everyMs = 200) {
  for (;;) {
    const run = await admin.request('GET', `/agents/${agentId}/evaluation-runs/${runId}`);
    sample(run);
    if (done(run)) return run;
    if (run.execution_state === 'failed') throw new Error(`run failed: ${run.error_message}`);
    await sleep(everyMs);
  }
}

/** The floor: the same model work from one plain script, item after item. */
async function floor(modelUrl, n) {
  const started = Date.now();
  for (let i = 0; i < n; i++) {
    const answer = await fetch(`${modelUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: `What is item ${i + 1}?` }] }),
    });
    const text = await answer.text();
    const judge = await fetch(`${modelUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        response_format: { type: 'json_schema', json_schema: { name: 'evaluation_judge', schema: {} } },
        messages: [
          { role: 'user', content: JSON.stringify({ question: `What is item ${i + 1}?`, expected_answers: ['tok0 tok1 tok2'], answer: text.length }) },
        ],
      }),
    });
    JSON.parse((await judge.json()).choices[0].message.content);
  }
  return { items: n, items_per_s: n / ((Date.now() - started) / 1000) };
}

const summary = { date: new Date().toISOString(), machine: machine(), items, concurrency, recovery_items: recoveryItems, model_delay_ms: modelDelayMs };

await runBench('eval', {
  summary,
  async main() {
    const fake = await startHelper(path.join(here, '../stream/fake-model.mjs'), [String(modelDelayMs)]);
    const modelUrl = `http://127.0.0.1:${fake.port}/v1`;
    const env = {
      ...adminEnv(ADMIN),
      OPENAI_API_KEY: 'bench-key',
      'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': JSON.stringify(modelUrl),
      AGENT_HOST__EVALUATION__ITEM_CONCURRENCY: String(concurrency),
    };
    const host = await startHost({ name: 'eval', env, nodeArgs: profile?.nodeArgs });
    const admin = await adminClient(host.url, ADMIN);
    const agent = await admin.request('POST', '/agents', { name: 'Eval bench', agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' });

    // Throughput and memory.
    const snapshot = await frozenSnapshot(admin, items);
    const rss = [];
    const chroma = hostChildMatching(host, /chroma/i);
    const cpu = () => ({ 'fake model': cpuSeconds(fake.child.pid), ...hostCpuSeconds(host, chroma) });
    const cpuBefore = cpu();
    const from = profileClockUs();
    const created = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: snapshot.dataset_id });
    const run = await pollRun(
      admin,
      agent.agent_id,
      created.run_id,
      (r) => r.execution_state === 'completed',
      () => rss.push(rssKiB(host.pid)),
    );
    runWindow.push([from, profileClockUs()]);
    summary.host_cpu_seconds = cpuSpent(cpuBefore, cpu());
    const seconds = (Date.parse(run.completed_at) - Date.parse(run.started_at)) / 1000;
    summary.host = {
      items: run.items_completed + run.items_failed,
      items_failed: run.items_failed,
      seconds,
      items_per_s: run.item_count / seconds,
      judged: run.summary.judged_count,
      host_rss_mib: mib(rss),
    };
    console.log(
      `host: ${run.item_count} items in ${fmt(seconds)} s = ${fmt(summary.host.items_per_s)} items/s (concurrency ${concurrency}); RSS p50 ${fmt(summary.host.host_rss_mib.p50)} MiB, max ${fmt(summary.host.host_rss_mib.max)} MiB`,
    );
    console.log(cpuTable(`CPU during the host's run (${os.cpus().length} CPUs)`, summary.host_cpu_seconds, items));
    const floorCpu = () => {
      const { user, system } = process.cpuUsage();
      return { 'fake model': cpuSeconds(fake.child.pid), script: (user + system) / 1e6 };
    };
    const floorBefore = floorCpu();
    summary.floor = await floor(modelUrl, items);
    summary.floor_cpu_seconds = cpuSpent(floorBefore, floorCpu());
    console.log(`floor (sequential script, 2 model calls per item): ${fmt(summary.floor.items_per_s)} items/s`);
    console.log(cpuTable('CPU during the floor', summary.floor_cpu_seconds, items));
    // The fake model is one Node process: whatever calls it, it cannot serve more items a second than this.
    summary.fake_model_ceiling_items_per_s = items / summary.host_cpu_seconds['fake model'];
    summary.ratio_ceiling_floor = ratio(summary.fake_model_ceiling_items_per_s, summary.floor.items_per_s);
    console.log(
      `the fake model's ceiling: ${fmt(summary.fake_model_ceiling_items_per_s)} items/s (one core over its CPU per item in the host's run), ` +
        `${fmt(summary.ratio_ceiling_floor, 2)}x the floor`,
    );
    summary.ratio_host_floor = ratio(summary.host.items_per_s, summary.floor.items_per_s);
    if (recoveryItems === 0 || profile) return;

    // Recovery: a second instance on the same databases claims a run and is killed mid-run.
    const db = await hostDatabase(host);
    const chromaPid = hostChildMatching(host, /chroma/i);
    const chromaPort = readFileSync(`/proc/${chromaPid}/cmdline`, 'utf8')
      .split('\0')
      .at(readFileSync(`/proc/${chromaPid}/cmdline`, 'utf8').split('\0').indexOf('--port') + 1);
    const password = readFileSync(path.join(host.dataDir, 'postgres.password'), 'utf8').trim();
    const pgPort = readFileSync(path.join(host.dataDir, 'postgres/postmaster.pid'), 'utf8').split('\n')[3];
    const second = await startHost({
      name: 'eval-b',
      env,
      external: {
        databaseUrl: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/agent_host`,
        chromaUrl: `http://127.0.0.1:${chromaPort}`,
      },
    });
    const adminB = await adminClient(second.url, ADMIN);
    const recoverySnapshot = await frozenSnapshot(adminB, recoveryItems);
    const doomed = await adminB.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: recoverySnapshot.dataset_id });
    let claimant;
    for (;;) {
      const { rows } = await db.query(
        'SELECT lease_owner, status, (SELECT count(*)::int FROM evaluation_results WHERE run_id = $1) AS done FROM evaluation_runs WHERE id = $1',
        [doomed.run_id],
      );
      if (rows[0].status === 'completed') throw new Error(`the recovery run finished before it could be killed: raise --recovery-items (${recoveryItems})`);
      claimant = rows[0].lease_owner;
      if (claimant && rows[0].done > 0) break;
      await sleep(20);
    }
    // Agenda's dispatch job may run on either instance: the one that claimed the run is killed (the first one's
    // Postgres and Chroma outlive its process), and the other recovers it.
    const [victim, survivor] = claimant.includes(`-${second.pid}-`) ? [second, admin] : [host, adminB];
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    summary.recovery = { killed: victim === host ? 'first instance' : 'second instance' };
    const states = [];
    const again = await pollRun(
      survivor,
      agent.agent_id,
      doomed.run_id,
      (r) => r.attempt_count >= 2 && r.execution_state === 'running',
      (r) => {
        if (states.at(-1)?.state !== r.execution_state) states.push({ state: r.execution_state, after_ms: Date.now() - killedAt });
      },
      100,
    );
    summary.recovery.kill_to_running_again_ms = Date.now() - killedAt;
    summary.recovery.states = states;
    const finished = await pollRun(
      survivor,
      agent.agent_id,
      doomed.run_id,
      (r) => r.execution_state === 'completed',
      () => {},
      250,
    );
    const { rows } = await db.query('SELECT count(*)::int AS n, count(DISTINCT item_id)::int AS distinct_items FROM evaluation_results WHERE run_id = $1', [
      doomed.run_id,
    ]);
    summary.recovery.results = rows[0];
    summary.recovery.items_completed = finished.items_completed;
    summary.recovery.attempt_count = again.attempt_count;
    console.log(
      `recovery (${summary.recovery.killed} killed): running again ${fmt(summary.recovery.kill_to_running_again_ms / 1000)} s after the kill ` +
        `(lease 60 s, supervisor every 10 s); ${rows[0].n} results for ${rows[0].distinct_items} items`,
    );
    await db.end();
  },
  report() {
    if (profile) printHottest((summary.host_cpu_profile = hottest(profile.dir, 15, runWindow)));
    console.log(
      `\nmodel delay ${modelDelayMs} ms: host ${fmt(summary.host.items_per_s)} items/s vs floor ${fmt(summary.floor.items_per_s)} items/s: ` +
        `${fmt(summary.ratio_host_floor, 2)}x (target >= 5x at concurrency 16; the fake model's ceiling ${fmt(summary.ratio_ceiling_floor, 2)}x)`,
    );
  },
});
process.exit(0);
