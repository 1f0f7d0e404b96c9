#!/usr/bin/env node
// Schedule benchmark: many one-off scheduled tasks due within one window, run as chat turns on a zero-latency fake
// model, against Agenda alone running an empty job at the same due times (the floor), in one run.
//   fake model: ../stream/fake-model.mjs (OpenAI-compatible, 20 tokens), child process
//   host:       `agent-host start` on a fresh data dir, an agent on the fake model; the tasks are made over REST
//               (`POST /scheduled-tasks`, target_mode new_session) before the window opens
//   floor:      floor.mjs, Agenda with the host's Postgres backend, process_every and concurrency, in a database of
//               its own on the host's Postgres, an empty job per due time
// Lateness is a run's start minus its due time (for the host, `started_at - due_at` of each run as stored); runs/s
// is the runs over the time from the first start to the last. Run by hand after `npm run build`:
//   node bench/schedule/run.mjs [--tasks 10000] [--window 60] [--lead 150] [--create-concurrency 16] [--profile]
// Writes bench/results/schedule.json.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, ask, hostDatabase, machine, runBench, sleep, startHelper, startHost } from '../lib/host.mjs';
import { adminClient, adminEnv, eachLimited } from '../lib/admin.mjs';
import { hottest, printHottest, profileClockUs, requestedProfile } from '../lib/profile.mjs';
import { fmt, latencySummary, markdownTable, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const tasks = Number(arg('--tasks', 10_000));
const windowSeconds = Number(arg('--window', 60));
const leadSeconds = Number(arg('--lead', 150));
const createConcurrency = Number(arg('--create-concurrency', 16));
// With --profile the host runs under --cpu-prof (bench/results/schedule-prof/) and its hottest frames while it ran
// the window's tasks are printed.
const profile = requestedProfile('schedule');
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
// The host's defaults: `[jobs] process_every` and the runner's concurrency (core/src/scheduled-tasks/task-runner.ts).
const PROCESS_EVERY_MS = 2_000;
const CONCURRENCY = 16;
if (![tasks, windowSeconds, leadSeconds, createConcurrency].every((n) => Number.isFinite(n) && n > 0)) {
  console.error('usage: node bench/schedule/run.mjs [--tasks N] [--window S] [--lead S] [--create-concurrency N]');
  process.exit(2);
}

/** Lateness percentiles and throughput of one side, from start times and due times in ms. */
function measure(lateness, startedAt) {
  const starts = [...startedAt].sort((a, b) => a - b);
  const spanMs = starts.at(-1) - starts[0];
  return { runs: lateness.length, runs_per_s: spanMs > 0 ? (lateness.length - 1) / (spanMs / 1000) : null, lateness_ms: latencySummary(lateness) };
}

const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  tasks,
  window_seconds: windowSeconds,
  process_every_ms: PROCESS_EVERY_MS,
  concurrency: CONCURRENCY,
};

await runBench('schedule', {
  summary,
  async main() {
    const fake = await startHelper(path.join(here, '../stream/fake-model.mjs'));
    const host = await startHost({
      name: 'schedule',
      env: {
        ...adminEnv(ADMIN),
        OPENAI_API_KEY: 'bench-key',
        AGENT_HOST__PLUGINS__MODELS_OPENAI__BASE_URL: JSON.stringify(`http://127.0.0.1:${fake.port}/v1`),
        AGENT_HOST__SCHEDULED_TASKS__MAX_ACTIVE_PER_AGENT: String(tasks + 1),
      },
      nodeArgs: profile?.nodeArgs,
    });
    const admin = await adminClient(host.url, ADMIN);
    const agent = await admin.request('POST', '/agents', {
      name: 'Scheduler bench',
      agent_type: 'chat',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
    });
    const windowStart = Date.now() + leadSeconds * 1000;
    const dueTimes = Array.from({ length: tasks }, (_, i) => new Date(windowStart + Math.floor((i * windowSeconds * 1000) / tasks)).toISOString());

    const createdAt = Date.now();
    await eachLimited(dueTimes, createConcurrency, (runAt) =>
      admin.request('POST', '/scheduled-tasks', {
        agent_id: agent.agent_id,
        schedule_payload: { kind: 'once', run_at: runAt },
        payload: { message: 'Check the order status.' },
        target_mode: 'new_session',
      }),
    );
    const creationMs = Date.now() - createdAt;
    summary.creation = { ms: creationMs, tasks_per_s: tasks / (creationMs / 1000), finished_before_window: Date.now() < windowStart };
    console.error(`made ${tasks} tasks in ${(creationMs / 1000).toFixed(1)} s; the window opens in ${((windowStart - Date.now()) / 1000).toFixed(0)} s`);

    const db = await hostDatabase(host);
    try {
      for (;;) {
        const { rows } = await db.query(
          `SELECT count(*) FILTER (WHERE status IN ('succeeded', 'failed', 'cancelled'))::int AS ended, count(*)::int AS runs FROM scheduled_task_runs`,
        );
        if (rows[0].ended >= tasks) {
          // The host's profile counts from the window's opening to its last run: not the tasks' creation or the floor.
          summary.run_window_us = [profileClockUs() - (Date.now() - windowStart) * 1000, profileClockUs()];
          break;
        }
        if (Date.now() > windowStart + (windowSeconds + 600) * 1000)
          throw new Error(`only ${rows[0].ended} of ${tasks} runs ended 10 minutes after the window`);
        await sleep(1_000);
      }
      const { rows } = await db.query(
        `SELECT status, extract(epoch FROM due_at) * 1000 AS due, extract(epoch FROM started_at) * 1000 AS started FROM scheduled_task_runs`,
      );
      const failed = rows.filter((r) => r.status !== 'succeeded').length;
      summary.host = {
        ...measure(
          rows.map((r) => Number(r.started) - Number(r.due)),
          rows.map((r) => Number(r.started)),
        ),
        not_succeeded: failed,
      };
      const turns = await db.query('SELECT count(*)::int AS n FROM conversation_turns');
      summary.host.turns = turns.rows[0].n;

      // The floor, once the host has finished its runs: the same due times from now on, on the same Postgres.
      await db.query('CREATE DATABASE agenda_floor');
      const floorUrl = `postgres://postgres:${encodeURIComponent(db.password)}@127.0.0.1:${db.port}/agenda_floor`;
      const floor = await startHelper(path.join(here, 'floor.mjs'));
      const shift = Date.now() + 20_000 - windowStart;
      const floorDue = dueTimes.map((t) => new Date(new Date(t).getTime() + shift).toISOString());
      const result = await ask(
        floor.child,
        { type: 'run', connectionString: floorUrl, dueTimes: floorDue, processEveryMs: PROCESS_EVERY_MS, concurrency: CONCURRENCY },
        'done',
        (leadSeconds + windowSeconds + 600) * 1000,
      );
      summary.floor = measure(result.lateness_ms, result.started_at);
    } finally {
      await db.end();
    }
  },
  report() {
    if (profile) printHottest((summary.host_cpu_profile = hottest(profile.dir, 10, summary.run_window_us && [summary.run_window_us])));
    const { host, floor } = summary;
    console.log(
      markdownTable(
        `${tasks} one-off tasks due within ${windowSeconds} s (process_every ${PROCESS_EVERY_MS} ms, concurrency ${CONCURRENCY}); tasks made at ${fmt(summary.creation.tasks_per_s)} /s`,
        ['', 'runs/s', 'lateness p50 ms', 'p99 ms', 'max ms'],
        [
          ['host: a chat turn per run', fmt(host.runs_per_s), fmt(host.lateness_ms.p50_ms), fmt(host.lateness_ms.p99_ms), fmt(host.lateness_ms.max_ms)],
          ['floor: Agenda, empty job', fmt(floor.runs_per_s), fmt(floor.lateness_ms.p50_ms), fmt(floor.lateness_ms.p99_ms), fmt(floor.lateness_ms.max_ms)],
          [
            'host / floor',
            fmt(ratio(host.runs_per_s, floor.runs_per_s), 2),
            fmt(ratio(host.lateness_ms.p50_ms, floor.lateness_ms.p50_ms), 2),
            fmt(ratio(host.lateness_ms.p99_ms, floor.lateness_ms.p99_ms), 2),
            '',
          ],
        ],
      ),
    );
    if (host.not_succeeded) console.log(`${host.not_succeeded} host runs did not succeed`);
  },
});
