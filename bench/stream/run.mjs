#!/usr/bin/env node
// Stream benchmark: turns/s and time to first token of POST /stream, host against a bare baseline,
// both answering through LangChain `ChatOpenAI` from the same zero-latency fake model, in one run.
//   fake model: fake-model.mjs, OpenAI-compatible, 20 tokens per completion with usage (child process)
//   baseline:   baseline.mjs, minimal restify SSE server over `ChatOpenAI`, no persistence (child process)
//   host:       `agent-host start` on a fresh data dir (embedded Postgres and Chroma), `openai` provider
//               pointed at the fake model; every turn persisted in Postgres
//   load:       loadgen.mjs, closed-loop clients (child process), each concurrency point run on the
//               baseline then the host, with a discarded warm-up before each
// Run by hand after `npm run build`:
//   node bench/stream/run.mjs [--seconds 10] [--warmup 2] [--concurrency 1,16,64] [--host-cpu-prof]
// Writes bench/results/stream.json (and the host's CPU profile under bench/results/stream-prof/).
import { fork, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
};
const seconds = Number(arg('--seconds', 10));
const warmupSeconds = Number(arg('--warmup', 2));
const concurrencies = String(arg('--concurrency', '1,16,64')).split(',').map(Number);
const hostCpuProf = process.argv.includes('--host-cpu-prof');
if (!(seconds > 0) || !(warmupSeconds >= 0) || concurrencies.some((c) => !(Number.isInteger(c) && c > 0))) {
  console.error('usage: node bench/stream/run.mjs [--seconds N] [--warmup N] [--concurrency 1,16,64] [--host-cpu-prof]');
  process.exit(2);
}
const HOST_BOOT_TIMEOUT_MS = 240_000;
const HOST_STOP_TIMEOUT_MS = 30_000;
const resultsDir = path.join(root, 'bench/results');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- processes this run starts, stopped in `cleanup` whatever happens ----
const children = []; // forked helpers (fake model, baseline, load generator)
let host; // { child, output(), descendants: Set<number> }
let scratch;

/** Forks a helper and waits for its first message of `readyType` (bounded). */
function startHelper(file, args = [], readyType = 'listening', timeoutMs = 30_000) {
  const child = fork(path.join(here, file), args, { cwd: root, execArgv: ['--no-deprecation'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start in ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before it was ready`)));
    child.on('message', function onMessage(message) {
      if (message?.type !== readyType) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve({ child, ...message });
    });
  });
}

/** Sends `message` to a helper and waits for its reply of `replyType`. */
function ask(child, message, replyType, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.off('message', onMessage), reject(new Error(`no ${replyType} in ${timeoutMs} ms`))), timeoutMs);
    function onMessage(reply) {
      if (reply?.type === 'failed') return (clearTimeout(timer), child.off('message', onMessage), reject(new Error(reply.error)));
      if (reply?.type !== replyType) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(reply);
    }
    child.on('message', onMessage);
    child.send(message);
  });
}

const parentOf = (pid) => {
  try {
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  } catch {
    return undefined;
  }
};
const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Live descendants of `rootPid` (embedded Postgres, Chroma, ...). */
function descendantsOf(rootPid) {
  const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  const found = [];
  let frontier = [rootPid];
  for (let depth = 0; frontier.length && depth < 10; depth++) {
    frontier = all.filter((pid) => frontier.includes(parentOf(pid)));
    found.push(...frontier);
  }
  return found;
}

async function startHost(modelUrl) {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'agent-host-bench-stream-'));
  chmodSync(scratch, 0o755);
  const dataDir = path.join(scratch, 'data');
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    PORT: '0',
    AGENT_HOST_DATA_DIR: dataDir,
    ADMIN_ACCESS_TOKEN_SECRET_KEY: 'bench-stream-signing-key-0123456789abcdef',
    OPENAI_API_KEY: 'bench-key',
    'AGENT_HOST__PLUGINS__MODELS-LANGCHAIN__OPENAI_BASE_URL': JSON.stringify(modelUrl),
  };
  delete env.DATABASE_URL;
  delete env.CHROMA_URL;
  delete env.APP_ENV; // the default configuration (development), as a user would start it
  const nodeArgs = ['--no-deprecation'];
  if (hostCpuProf) {
    const profDir = path.join(resultsDir, 'stream-prof');
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${profDir}`);
  }
  const started = Date.now();
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'host/dist/cli.js'), 'start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  host = { child, output: () => out, descendants: new Set(), dataDir };
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  let url;
  while (!(url = /agent-host is serving on (http:\/\/\S+)/.exec(out)?.[1])) {
    if (exited()) throw new Error(`host exited (${child.exitCode ?? child.signalCode}) before serving:\n${out}`);
    if (Date.now() - started > HOST_BOOT_TIMEOUT_MS) throw new Error(`host did not serve in ${HOST_BOOT_TIMEOUT_MS} ms:\n${out}`);
    await sleep(50);
  }
  for (;;) {
    const health = await fetch(`${url}/healthz`).then((r) => r.json()).catch(() => undefined);
    if (health?.guard_state === 'ok') break;
    if (exited()) throw new Error(`host exited before it was healthy:\n${out}`);
    if (Date.now() - started > HOST_BOOT_TIMEOUT_MS) throw new Error(`host not healthy in ${HOST_BOOT_TIMEOUT_MS} ms: ${JSON.stringify(health)}\n${out}`);
    await sleep(100);
  }
  for (const pid of descendantsOf(child.pid)) host.descendants.add(pid);
  return { url, bootMs: Date.now() - started };
}

/** SIGTERM the host and wait for it to exit; then make sure nothing it started is left. */
async function stopHost() {
  if (!host) return null;
  const { child } = host;
  for (const pid of descendantsOf(child.pid)) host.descendants.add(pid);
  const report = { exit: null, stop_ms: null, leftovers: [] };
  if (child.exitCode === null && child.signalCode === null) {
    const t0 = Date.now();
    const exit = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
    child.kill('SIGTERM');
    const outcome = await Promise.race([exit, sleep(HOST_STOP_TIMEOUT_MS).then(() => 'timeout')]);
    if (outcome === 'timeout') {
      child.kill('SIGKILL');
      report.exit = `SIGKILL after ${HOST_STOP_TIMEOUT_MS} ms`;
      await exit;
    } else report.exit = outcome;
    report.stop_ms = Date.now() - t0;
  } else report.exit = child.exitCode ?? child.signalCode;
  // Give children of the host (Postgres, Chroma) a moment to finish their own shutdown.
  for (let i = 0; i < 50 && [...host.descendants].some(isAlive); i++) await sleep(100);
  for (const pid of host.descendants) {
    if (!isAlive(pid)) continue;
    report.leftovers.push(pid);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  host = undefined;
  return report;
}

let cleaned = false;
async function cleanup() {
  if (cleaned) return null;
  cleaned = true;
  let hostStop = null;
  try {
    hostStop = await stopHost();
  } catch (error) {
    console.error('stopping the host failed:', error);
  }
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => (child.kill('SIGKILL'), resolve()), 5_000);
          child.once('exit', () => (clearTimeout(timer), resolve()));
          if (child.connected) child.disconnect(); // helpers close their servers and exit
          else child.kill('SIGTERM');
        }),
    ),
  );
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  return hostStop;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping everything this run started`);
    cleanup().finally(() => process.exit(130));
  });
}

// ---- statistics ----
const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : null);
function summarize(reply, seconds) {
  const ttft = [...reply.ttft].sort((a, b) => a - b);
  const total = [...reply.total].sort((a, b) => a - b);
  return {
    turns_per_s: reply.ttft.length / seconds,
    completed: reply.ttft.length,
    ttft_p50_ms: percentile(ttft, 50),
    ttft_p99_ms: percentile(ttft, 99),
    completion_p50_ms: percentile(total, 50),
    completion_p99_ms: percentile(total, 99),
    sent: reply.measured.counts.sent,
    failed: reply.measured.counts.failed,
    completed_after_window: reply.measured.counts.late,
    failures: reply.measured.failures,
    token_counts: reply.token_counts,
    warmup: reply.warmup && { sent: reply.warmup.counts.sent, ok: reply.warmup.counts.ok, failed: reply.warmup.counts.failed },
  };
}
const fmt = (n, digits = 1) => (n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const ratio = (a, b) => (a === null || b === null || b === 0 ? null : a / b);

// ---- the run ----
const summary = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, node: process.version, loadavg_before: os.loadavg() },
  seconds,
  warmup_seconds: warmupSeconds,
  concurrencies,
  points: [],
};
let failedRun = false;
try {
  if (!existsSync(path.join(root, 'host/dist/cli.js'))) throw new Error('host/dist/cli.js is missing: run `npm run build` first');
  const model = await startHelper('fake-model.mjs');
  const modelUrl = `http://127.0.0.1:${model.port}/v1`;
  const modelCount = async () => (await ask(model.child, { type: 'count' }, 'count', 5_000)).served;
  const baseline = await startHelper('baseline.mjs', [modelUrl]);
  const baselineUrl = `http://127.0.0.1:${baseline.port}`;
  const loadgen = fork(path.join(here, 'loadgen.mjs'), [], { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(loadgen);

  console.log(`fake model ${modelUrl}; baseline ${baselineUrl}; starting the host on a fresh data dir ...`);
  const { url: hostUrl, bootMs } = await startHost(modelUrl);
  console.log(`host ${hostUrl} healthy in ${(bootMs / 1000).toFixed(1)} s (host, Postgres, Chroma: ${host.descendants.size + 1} processes)`);
  summary.host_boot_ms = bootMs;

  // Both sides must answer the fake model's 20 tokens, then `done`, before anything is measured.
  const verified = {};
  for (const [side, url] of [['baseline', baselineUrl], ['host', hostUrl]]) {
    const { result } = await ask(loadgen, { type: 'verify', url, label: `verify-${side}` }, 'verified', 60_000);
    verified[side] = { tokens: result.tokens, text_matches: result.text === model.expected, done: result.done, error: result.error, status: result.status };
    if (result.tokens !== 20 || result.text !== model.expected || !result.done || result.error !== null) {
      throw new Error(`${side} reply is not the fake model's 20 tokens then done: ${JSON.stringify(result)}`);
    }
  }
  summary.verified = verified;
  console.log('verified: baseline and host each streamed the 20 tokens, then done\n');

  let hostSent = 1;
  let hostOk = 1; // the verification request
  for (const concurrency of concurrencies) {
    const point = { concurrency };
    for (const [side, url] of [['baseline', baselineUrl], ['host', hostUrl]]) {
      const before = await modelCount();
      const reply = await ask(loadgen, { type: 'run', url, concurrency, seconds, warmupSeconds, label: `${side}-c${concurrency}` }, 'result', (seconds + warmupSeconds) * 1000 + 120_000);
      point[side] = summarize(reply, seconds);
      const requests = reply.measured.counts.sent + (reply.warmup?.counts.sent ?? 0);
      point[side].model_calls_per_request = (await modelCount() - before) / requests;
      if (side === 'host') {
        hostSent += requests;
        hostOk += reply.measured.counts.ok + (reply.warmup?.counts.ok ?? 0);
      }
      const s = point[side];
      console.log(
        `c=${String(concurrency).padEnd(3)} ${side.padEnd(8)} ${fmt(s.turns_per_s).padStart(8)} turns/s  ttft p50 ${fmt(s.ttft_p50_ms).padStart(7)} ms  p99 ${fmt(s.ttft_p99_ms).padStart(7)} ms  ` +
          `completion p50 ${fmt(s.completion_p50_ms).padStart(7)} ms  failed ${s.failed}${s.failed ? ' ' + JSON.stringify(s.failures) : ''}`,
      );
    }
    point.ratios = {
      turns_per_s: ratio(point.host.turns_per_s, point.baseline.turns_per_s),
      ttft_p50: ratio(point.host.ttft_p50_ms, point.baseline.ttft_p50_ms),
      ttft_p99: ratio(point.host.ttft_p99_ms, point.baseline.ttft_p99_ms),
      completion_p50: ratio(point.host.completion_p50_ms, point.baseline.completion_p50_ms),
    };
    summary.points.push(point);
  }

  // Every host turn is persisted before its `done`: count the rows through the embedded Postgres.
  const password = readFileSync(path.join(host.dataDir, 'postgres.password'), 'utf8').trim();
  const port = Number(readFileSync(path.join(host.dataDir, 'postgres/postmaster.pid'), 'utf8').split('\n')[3]);
  const db = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'agent_host' });
  await db.connect();
  try {
    const { rows } = await db.query('SELECT status, count(*)::int AS n FROM conversation_turns GROUP BY status ORDER BY status');
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    const sessions = (await db.query('SELECT count(*)::int AS n FROM chat_sessions')).rows[0].n;
    const messages = (await db.query('SELECT count(*)::int AS n FROM chat_messages')).rows[0].n;
    const snapshots = (await db.query('SELECT count(*)::int AS n FROM turn_context_snapshots')).rows[0].n;
    const settings = (await db.query("SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections', 'wal_level')")).rows;
    summary.persistence = {
      host_requests_sent: hostSent,
      host_replies_completed: hostOk,
      conversation_turns: rows.reduce((n, r) => n + r.n, 0),
      conversation_turns_by_status: byStatus,
      chat_sessions: sessions,
      chat_messages: messages,
      turn_context_snapshots: snapshots,
      completed_turns_match_completed_replies: (byStatus.completed ?? 0) === hostOk,
      postgres_settings: Object.fromEntries(settings.map((r) => [r.name, r.setting])),
    };
  } finally {
    await db.end();
  }
} catch (error) {
  failedRun = true;
  console.error('stream benchmark failed:', error?.stack ?? error);
  if (host) console.error(`host output:\n${host.output().slice(-4000)}`);
} finally {
  const hostStop = await cleanup();
  summary.host_stop = hostStop;
}

if (!failedRun) {
  summary.machine.loadavg_after = os.loadavg();
  const rows = summary.points.map((p) => {
    const b = p.baseline;
    const h = p.host;
    const r = p.ratios;
    return `| ${p.concurrency} | ${fmt(b.turns_per_s)} | ${fmt(h.turns_per_s)} | ${fmt(r.turns_per_s, 2)} | ${fmt(b.ttft_p50_ms)} | ${fmt(h.ttft_p50_ms)} | ${fmt(r.ttft_p50, 2)} | ${fmt(b.ttft_p99_ms)} | ${fmt(h.ttft_p99_ms)} | ${fmt(r.ttft_p99, 2)} |`;
  });
  const table = [
    `POST /stream, 20 tokens from a zero-latency fake model, closed loop, ${seconds} s per point (${os.cpus().length} CPUs, load generator on the same machine)`,
    '',
    '| concurrency | baseline turns/s | host turns/s | host/baseline | baseline p50 TTFT ms | host p50 TTFT ms | host/baseline | baseline p99 TTFT ms | host p99 TTFT ms | host/baseline |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  summary.table = table;
  const p = summary.persistence;
  console.log(`\n${table}\n`);
  console.log(
    `persisted: ${p.conversation_turns} conversation_turns (${JSON.stringify(p.conversation_turns_by_status)}) for ${p.host_replies_completed} completed host replies ` +
      `of ${p.host_requests_sent} sent (warm-ups, measured windows and the verification request): ${p.completed_turns_match_completed_replies ? 'match' : 'MISMATCH'}; ` +
      `${p.chat_sessions} sessions, ${p.chat_messages} messages, ${p.turn_context_snapshots} context snapshots`,
  );
  console.log(`model calls per host request: ${summary.points.map((q) => fmt(q.host.model_calls_per_request, 2)).join(', ')}`);
  console.log(`host stop: exit ${summary.host_stop?.exit} in ${summary.host_stop?.stop_ms} ms; leftover processes killed: ${summary.host_stop?.leftovers.length ?? 0}`);
}
mkdirSync(resultsDir, { recursive: true });
if (!failedRun) writeFileSync(path.join(resultsDir, 'stream.json'), JSON.stringify(summary, null, 2));
process.exit(failedRun ? 1 : 0);
