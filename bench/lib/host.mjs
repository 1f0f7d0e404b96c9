// What every benchmark run needs around the thing it measures: the host started on a fresh scratch data dir
// (`agent-host start` with embedded Postgres and Chroma), helper child processes (fake model, baselines, load
// generators), and the guarantee that everything it started is stopped at the end, on failure and on Ctrl+C.
// Importing this module installs SIGINT/SIGTERM handlers that stop everything, then exit 130.
import { execFileSync, fork, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const resultsDir = path.join(root, 'bench/results');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const HOST_BOOT_TIMEOUT_MS = 240_000;
const HOST_STOP_TIMEOUT_MS = 30_000;

/** The value after `--name` on the command line, or `fallback`. */
export const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
};

// ---- processes this run starts, stopped in `cleanup` whatever happens ----
const children = []; // forked helpers
const hosts = []; // handles of `startHost`
const scratchDirs = [];

/** Forks a helper (a bench's .mjs file, IPC channel open); it is stopped in `cleanup`. */
export function forkHelper(file, args = [], options = {}) {
  refuseAfterCleanup();
  const child = fork(file, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...options });
  children.push(child);
  return child;
}

/** Forks a helper and waits for its first message of `readyType` (bounded); resolves with `{child, ...message}`. */
export function startHelper(file, args = [], readyType = 'listening', timeoutMs = 30_000) {
  const child = forkHelper(file, args, { execArgv: ['--no-deprecation'] });
  const name = path.basename(file);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready`)));
    child.on('message', function onMessage(message) {
      if (message?.type !== readyType) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve({ child, ...message });
    });
  });
}

/** Sends `message` to a helper and waits for its reply of `replyType` (a `failed` reply rejects). */
export function ask(child, message, replyType, timeoutMs) {
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

/** Stops a helper: disconnecting lets it close its servers and exit; SIGKILL after 5 s. */
export function stopHelper(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => (child.kill('SIGKILL'), resolve()), 5_000);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    if (child.connected) child.disconnect();
    else child.kill('SIGTERM');
  });
}

// ---- /proc ----
const procStatus = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
};
const parentOf = (pid) => {
  const m = /^PPid:\s+(\d+)/m.exec(procStatus(pid));
  return m ? Number(m[1]) : undefined;
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
export function descendantsOf(rootPid) {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const found = [];
  let frontier = [rootPid];
  for (let depth = 0; frontier.length && depth < 10; depth++) {
    frontier = all.filter((pid) => frontier.includes(parentOf(pid)));
    found.push(...frontier);
  }
  return found;
}
/** The first of the host's child processes whose command line matches `pattern` (Chroma: /chroma/i), if any. */
export function hostChildMatching(host, pattern) {
  return [...host.descendants].find((pid) => {
    try {
      return pattern.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}
/** Resident set size of one process (VmRSS), in KiB; null once it is gone. */
export function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(procStatus(pid));
  return m ? Number(m[1]) : null;
}
let clockTicks;
/**
 * CPU time (user + system) one process has used so far, in seconds; null once it is gone. With `reaped`, that of its
 * children that ended and it waited for too: Postgres's server reaps the backends the host's pool closes mid-run, and
 * their CPU would otherwise leave the sum with them.
 */
export function cpuSeconds(pid, { reaped = false } = {}) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
  // utime, stime: the 14th and 15th fields; cutime, cstime (the children's): the 16th and 17th.
  return (Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / clockTicks;
}

/**
 * CPU seconds used so far by the host's node process, its Chroma (`chroma`, its pid or null) and its Postgres
 * processes (server and backends, those that ended too): every other descendant of the host.
 */
export function hostCpuSeconds(host, chroma) {
  const chromaTree = chroma ? [chroma, ...descendantsOf(chroma)] : [];
  const postgres = descendantsOf(host.pid).filter((pid) => !chromaTree.includes(pid));
  const sum = (pids) => pids.reduce((s, pid) => s + (cpuSeconds(pid, { reaped: true }) ?? 0), 0);
  return { host: cpuSeconds(host.pid) ?? 0, chroma: sum(chromaTree), postgres: sum(postgres) };
}

/** The CPU seconds each process spent between two `{name: seconds}` readings. */
export const cpuSpent = (before, after) => Object.fromEntries(Object.keys(after).map((name) => [name, after[name] - before[name]]));

// ---- the host ----
/**
 * Starts `agent-host start` (the built `host/dist/cli.js`, default configuration) on a fresh scratch data dir
 * with embedded Postgres and Chroma, on a free port, and waits for the serving banner and a healthy /healthz.
 * `env` adds to (or, with `undefined`, removes from) the host's environment; `nodeArgs` go to its node; `external`
 * (`{databaseUrl, chromaUrl}`) points it at another host's Postgres and Chroma instead of starting its own.
 * Resolves with the handle `{child, pid, url, bootMs, dataDir, output(), descendants}`.
 */
export async function startHost({ name, env: extraEnv = {}, nodeArgs = [], external }) {
  refuseAfterCleanup();
  if (!existsSync(path.join(root, 'host/dist/cli.js'))) throw new Error('host/dist/cli.js is missing: run `npm run build` first');
  const scratch = mkdtempSync(path.join(os.tmpdir(), `agent-host-bench-${name}-`));
  scratchDirs.push(scratch);
  chmodSync(scratch, 0o755);
  const dataDir = path.join(scratch, 'data');
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    PORT: '0',
    AGENT_HOST_DATA_DIR: dataDir,
    ADMIN_ACCESS_TOKEN_SECRET_KEY: `bench-${name}-signing-key-0123456789abcdef`,
    // Every load comes from this one address: buckets far above any benchmark's rate, so they are measured, never hit.
    AGENT_HOST__RATE_LIMITS__STREAM_PER_IP_PER_MINUTE: '100000000',
    AGENT_HOST__RATE_LIMITS__STREAM_PER_SESSION_PER_MINUTE: '100000000',
    AGENT_HOST__RATE_LIMITS__ANONYMOUS_PER_MINUTE: '100000000',
    AGENT_HOST__RATE_LIMITS__SOCKET_HANDSHAKES_PER_IP_PER_MINUTE: '100000000',
    AGENT_HOST__AGENT__PER_CALLER_DAILY_REQUESTS: '0',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  delete env.CHROMA_URL;
  // A second instance on the first one's databases (bench/eval's recovery): the URLs it was given.
  if (external) Object.assign(env, { DATABASE_URL: external.databaseUrl, CHROMA_URL: external.chromaUrl });
  delete env.APP_ENV; // the default configuration (development), as a user would start it
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const started = Date.now();
  const child = spawn(process.execPath, ['--no-deprecation', ...nodeArgs, path.join(root, 'host/dist/cli.js'), 'start'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const host = { child, pid: child.pid, url: null, bootMs: null, dataDir, output: () => out, descendants: new Set(), stopped: null };
  hosts.push(host);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  let url;
  while (!(url = /agent-host is serving on (http:\/\/\S+)/.exec(out)?.[1])) {
    if (exited()) throw new Error(`host exited (${child.exitCode ?? child.signalCode}) before serving:\n${out}`);
    if (Date.now() - started > HOST_BOOT_TIMEOUT_MS) throw new Error(`host did not serve in ${HOST_BOOT_TIMEOUT_MS} ms:\n${out}`);
    await sleep(50);
  }
  for (;;) {
    const health = await fetch(`${url}/healthz`)
      .then((r) => r.json())
      .catch(() => undefined);
    if (health?.guard_state === 'ok') break;
    if (exited()) throw new Error(`host exited before it was healthy:\n${out}`);
    if (Date.now() - started > HOST_BOOT_TIMEOUT_MS) throw new Error(`host not healthy in ${HOST_BOOT_TIMEOUT_MS} ms: ${JSON.stringify(health)}\n${out}`);
    await sleep(100);
  }
  for (const pid of descendantsOf(child.pid)) host.descendants.add(pid);
  host.url = url;
  host.bootMs = Date.now() - started;
  return host;
}

/**
 * SIGTERMs the host and waits for it to exit (SIGKILL after 30 s); then makes sure nothing it started is left,
 * killing what is. Resolves with `{exit, stop_ms, leftovers}`; calling it again gives the same report.
 */
export function stopHost(host) {
  host.stopped ??= (async () => {
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
    return report;
  })();
  return host.stopped;
}

/** The URL of the host's embedded Postgres (the `agent_host` database). */
export function hostDatabaseUrl(host) {
  const password = readFileSync(path.join(host.dataDir, 'postgres.password'), 'utf8').trim();
  const port = Number(readFileSync(path.join(host.dataDir, 'postgres/postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/agent_host`;
}

/** A client of the host's embedded Postgres (the `agent_host` database), connected; `end()` it when done. */
export async function hostDatabase(host) {
  const db = new pg.Client({ connectionString: hostDatabaseUrl(host) });
  await db.connect();
  return db;
}

let cleaning;
let interrupted = false;
/** Nothing new is started once `cleanup` began (a run interrupted by Ctrl+C must not go on starting things). */
function refuseAfterCleanup() {
  if (cleaning) throw new Error('the run is being stopped; nothing new is started');
}
/** Stops every host (first) and helper this run started and removes the scratch dirs; safe to call twice. */
export function cleanup() {
  cleaning ??= (async () => {
    for (const host of hosts) {
      try {
        await stopHost(host);
      } catch (error) {
        console.error('stopping the host failed:', error);
      }
    }
    await Promise.all(children.map(stopHelper));
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping everything this run started`);
    interrupted = true;
    cleanup().finally(() => process.exit(130));
  });
}

/**
 * Runs a benchmark: `main()` (which fills `summary`), then `cleanup` whatever happened. On failure prints the
 * error and the tail of each host's output and exits 1; on success runs `report()` (the printed table) and
 * writes `summary` to bench/results/<name>.json.
 */
export async function runBench(name, { summary, main, report }) {
  try {
    await main();
  } catch (error) {
    if (interrupted) return new Promise(() => {}); // the signal handler exits once everything is stopped
    console.error(`${name} benchmark failed:`, error?.stack ?? error);
    for (const host of hosts) console.error(`host output:\n${host.output().slice(-4000)}`);
    await cleanup();
    process.exit(1);
  }
  await cleanup();
  summary.machine.loadavg_after = os.loadavg();
  report();
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, `${name}.json`), JSON.stringify(summary, null, 2));
}

/** What every summary starts with: when, and on which machine. */
export const machine = () => ({ cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, node: process.version, loadavg_before: os.loadavg() });
