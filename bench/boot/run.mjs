#!/usr/bin/env node
// Boot benchmark: time from `agent-host start` to a healthy /healthz.
//   cold:       fresh data dir and empty cache (initdb + pip install chromadb + first migrations)
//   first-data: cached Chroma venv, fresh data dir (initdb + migrations)
//   warm:       both kept from an earlier run (the everyday restart)
// Run by hand after `npm run build`: node bench/boot/run.mjs [--warm-runs N] [--warm-only]
//   --warm-only: skip the cold boot and use the usual cache (AGENT_HOST_CACHE_DIR or ~/.cache/agent-host), for
//   comparing two builds in minutes instead of reinstalling Chroma for each.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const warmRuns = Number(process.argv[process.argv.indexOf('--warm-runs') + 1]) || 5;
const warmOnly = process.argv.includes('--warm-only');

async function boot(label, env) {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--no-deprecation', path.join(root, 'host/dist/cli.js'), 'start'], {
    cwd: root,
    // A signing key of its own, as in bench/lib/host.mjs: without one the host is healthy but warns, and this waits for no warning.
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: '0',
      DATABASE_URL: '',
      CHROMA_URL: '',
      ADMIN_ACCESS_TOKEN_SECRET_KEY: 'bench-boot-signing-key-0123456789abcdef',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  let url;
  while (!(url = /serving on (\S+)/.exec(out)?.[1])) {
    if (child.exitCode !== null) throw new Error(`${label}: host exited\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  for (;;) {
    const health = await fetch(`${url}/healthz`)
      .then((r) => r.json())
      .catch(() => undefined);
    if (health?.guard_state === 'ok') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const rss = Number((await import('node:fs')).readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;
  const stopStart = process.hrtime.bigint();
  child.kill('SIGTERM');
  const code = await new Promise((r) => child.on('exit', (c) => r(c)));
  const stopMs = Number(process.hrtime.bigint() - stopStart) / 1e6;
  console.log(`${label.padEnd(12)} healthy in ${ms.toFixed(0).padStart(6)} ms  host RSS ${rss.toFixed(0)} MiB  stop ${stopMs.toFixed(0)} ms (exit ${code})`);
  return { label, ms, rss_mib: rss, stop_ms: stopMs };
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'agent-host-bench-'));
chmodSync(scratch, 0o755);
const dataDir = path.join(scratch, 'data');
const results = [];
const dirs = { AGENT_HOST_DATA_DIR: dataDir, ...(!warmOnly && { AGENT_HOST_CACHE_DIR: path.join(scratch, 'cache') }) };
try {
  results.push(await boot(warmOnly ? 'first-data' : 'cold', dirs));
  for (let i = 0; i < warmRuns; i++) results.push(await boot('warm', dirs));
  rmSync(dataDir, { recursive: true, force: true });
  results.push(await boot('first-data', dirs));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const warm = results
  .filter((r) => r.label === 'warm')
  .map((r) => r.ms)
  .sort((a, b) => a - b);
const summary = {
  date: new Date().toISOString(),
  ...(!warmOnly && { cold_ms: results[0].ms, cold_over_warm: results[0].ms / warm[Math.floor(warm.length / 2)] }),
  first_data_ms: results.at(-1).ms,
  warm_median_ms: warm[Math.floor(warm.length / 2)],
  results,
};
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
writeFileSync(path.join(root, `bench/results/boot${warmOnly ? '-warm' : ''}.json`), JSON.stringify(summary, null, 2));
console.log(JSON.stringify({ cold_ms: summary.cold_ms, first_data_ms: summary.first_data_ms, warm_median_ms: summary.warm_median_ms }));
