#!/usr/bin/env node
// WebSocket benchmark: broadcast latency and memory per socket with many customer sockets spread over
// session rooms, host against a bare socket.io baseline, in one run.
//   baseline: baseline.mjs, minimal socket.io server (the same socket.io, in-memory adapter), rooms,
//             each received message broadcast to its room, no persistence (child process)
//   host:     `agent-host start` on a fresh data dir (embedded Postgres and Chroma, default configuration,
//             offline model); a `public_anonymous` chat agent with human takeover; every session taken over
//             over REST, so a customer message is stored and broadcast and no AI turn runs
//   load:     clients.mjs (child process, a fresh one per server): `--sockets` customer sockets on
//             `/public/ws/<session>`, spread evenly over `--sessions` rooms; then `--messages` `user_message`s
//             at `--rate` per second (open loop) from random sockets; every socket of the room receives each
// Measured per server: broadcast latency (send to receipt at every socket of the room, sender included, on
// the load generator's clock) p50/p99/max, deliveries expected/received, messages/s achieved, the server's
// CPU during the messages, and its RSS (VmRSS of the server's node process only, not Postgres or Chroma;
// median of several samples after a settle delay) before and after connecting: memory per socket. Without a
// forced GC that delta is coarse: a process whose heap has room left after boot (the host) can take new sockets
// into it, so the host's figure moves between runs (12.8 and 23.3 KiB/socket in two runs on the same machine,
// the baseline 25.7 and 26.8): compare it over several runs before reading much into the memory ratio.
// A second, smaller point adds one operator socket (`/ws/<session>`, administrator cookie, the owner of the
// takeover) to each of `--operator-sessions` rooms; messages then come from customers and operators alike.
// Run by hand after `npm run build`:
//   node bench/ws/run.mjs [--sockets 1000] [--sessions 100] [--messages 2000] [--rate 100] [--settle 5]
//                         [--operator-sessions 10] [--operator-messages 500] [--profile] [--pg-waits]
// With --pg-waits the host's Postgres backends are sampled every 5 ms while its sockets connect and while they send
// messages (lib/pg-waits.mjs): what they waited on or ran, and in which statement.
// Writes bench/results/ws.json.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminClient, adminEnv, eachLimited } from '../lib/admin.mjs';
import {
  arg,
  ask,
  cpuSeconds,
  cpuSpent,
  descendantsOf,
  hostDatabase,
  machine,
  root,
  rssKiB,
  runBench,
  sleep,
  startHelper,
  startHost,
  stopHelper,
  stopHost,
} from '../lib/host.mjs';
import { pgWaitsTable, startPgWaits } from '../lib/pg-waits.mjs';
import { hottest, printHottest, profileClockUs, requestedProfile } from '../lib/profile.mjs';
import { fmt, latencySummary, markdownTable, median, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const sockets = Number(arg('--sockets', 1000));
const sessions = Number(arg('--sessions', 100));
const messages = Number(arg('--messages', 2000));
const rate = Number(arg('--rate', 100));
const settleSeconds = Number(arg('--settle', 5));
const connectConcurrency = Number(arg('--connect-concurrency', 50));
// Sockets connected and closed before each point's measured connect: a server's first connections run code V8 has not
// optimised yet (a quarter of the host's CPU while its first 1,000 sockets connected was V8's optimising compiler),
// which a server that has been up a while no longer pays. That first wave's rate is reported too (`cold_connect`).
const warmupSockets = Number(arg('--warmup-sockets', 1000));
const seed = Number(arg('--seed', 1));
const operatorSessions = Number(arg('--operator-sessions', 10));
const operatorMessages = Number(arg('--operator-messages', 500));
// With --profile the host runs under --cpu-prof (bench/results/ws-prof/) and its hottest frames are printed.
const profile = requestedProfile('ws');
/** The host's Postgres sampler, with --pg-waits (started once the host is up). */
let waits;
/** `[fromUs, toUs]` of the host's points, by phase, for its CPU profile. */
const hostWindows = { connect: [], messages: [] };
const positiveInts = [sockets, sessions, messages, connectConcurrency, operatorMessages];
if (
  positiveInts.some((n) => !(Number.isInteger(n) && n > 0)) ||
  sessions > sockets ||
  !(rate > 0) ||
  !(settleSeconds >= 0) ||
  !(Number.isInteger(warmupSockets) && warmupSockets >= 0) ||
  !Number.isInteger(seed) ||
  !(Number.isInteger(operatorSessions) && operatorSessions >= 0)
) {
  console.error(
    'usage: node bench/ws/run.mjs [--sockets 1000] [--sessions 100] [--messages 2000] [--rate 100] [--settle 5] [--connect-concurrency 50] [--warmup-sockets 1000] [--seed 1]\n' +
      '                             [--operator-sessions 10 (0: no operator point)] [--operator-messages 500]',
  );
  process.exit(2);
}
/** The operator point: as many customers per room as the main point, plus one operator socket in each. */
const operatorCustomers = operatorSessions * Math.round(sockets / sessions);
const ADMIN = { username: 'bench-admin', password: 'bench-ws-password-0123456789' };
const RSS_SAMPLES = 5;
const RSS_SAMPLE_INTERVAL_MS = 400;

/** Median VmRSS of `pid` in MiB over a few samples, after letting it settle. */
async function settledRssMiB(pid) {
  await sleep(settleSeconds * 1000);
  const samples = [];
  for (let i = 0; i < RSS_SAMPLES; i++) {
    if (i) await sleep(RSS_SAMPLE_INTERVAL_MS);
    samples.push(rssKiB(pid) / 1024);
  }
  return median(samples);
}

/** CPU seconds used so far by `pid` and, separately, by its descendants (the host's Postgres and Chroma). */
const cpuOf = (pid) => ({ own: cpuSeconds(pid), descendants: descendantsOf(pid).reduce((s, p) => s + (cpuSeconds(p, { reaped: true }) ?? 0), 0) });

/** Connects every socket of `specs` through `loadgen`, failing the run when any is refused; with its rate. */
async function connectAll(label, loadgen, url, specs) {
  const connected = await ask(loadgen, { type: 'connect', url, sockets: specs, concurrency: connectConcurrency, timeoutMs: 60_000 }, 'connected', 600_000);
  if (connected.connected !== specs.length)
    throw new Error(`${label}: ${connected.connected} of ${specs.length} sockets connected; refused: ${JSON.stringify(connected.refused)}`);
  return { ...connected, seconds: connected.elapsed_ms / 1000, sockets_per_s: connected.connected / (connected.elapsed_ms / 1000) };
}

/**
 * Connects `--warmup-sockets` sockets like `specs` (cycling through them) with a load generator of their own, then
 * closes them: the connect rate of that first wave.
 */
async function warmUp(label, url, specs) {
  const { child: loadgen } = await startHelper(path.join(here, 'clients.mjs'), [], 'ready');
  const wave = Array.from({ length: warmupSockets }, (_, i) => specs[i % specs.length]);
  const { connected, seconds, sockets_per_s } = await connectAll(`${label} warm-up`, loadgen, url, wave);
  await stopHelper(loadgen);
  return { connected, seconds, sockets_per_s };
}

/**
 * One point on one server: a fresh load generator connects `customers` customer sockets spread over `rooms`
 * new sessions, plus one operator socket per room when `operator` ({query, cookie}) is given (RSS before and
 * after); `prepare` readies the rooms (the host: takeover), then `messages` from random sockets; the server's
 * CPU over the messages. `startSession` names each room (the host issues public session ids), else a random id.
 */
async function measure(label, { url, pid, rooms, customers, operator, messages, agentId, prepare, startSession = async () => `bench-ws-${randomUUID()}` }) {
  const roomIds = [];
  for (let i = 0; i < rooms; i++) roomIds.push(await startSession());
  const specs = Array.from({ length: customers }, (_, i) => {
    const room = roomIds[i % rooms];
    return { room, role: 'customer', path: `/public/ws/${encodeURIComponent(room)}`, query: agentId ? { agent_id: agentId } : {} };
  });
  if (operator)
    for (const room of roomIds) specs.push({ room, role: 'operator', path: `/ws/${encodeURIComponent(room)}`, query: operator.query, cookie: operator.cookie });
  const sockets = specs.length;
  const point = { rooms, customer_sockets: customers, operator_sockets: sockets - customers };
  if (warmupSockets) point.cold_connect = await warmUp(label, url, specs);
  const { child: loadgen } = await startHelper(path.join(here, 'clients.mjs'), [], 'ready');
  point.rss_before_mib = await settledRssMiB(pid);

  const onHost = label.startsWith('host');
  const connectFrom = profileClockUs();
  if (onHost) waits?.open(`${label}: connect`);
  const connectCpu0 = { ...cpuOf(pid), loadgen: cpuSeconds(loadgen.pid) };
  const connected = await connectAll(label, loadgen, url, specs);
  const connectCpu1 = { ...cpuOf(pid), loadgen: cpuSeconds(loadgen.pid) };
  waits?.close();
  if (onHost) hostWindows.connect.push([connectFrom, profileClockUs()]);
  // CPU ms per socket connected, of each process: on 2 CPUs, the connect rate cannot pass 2000 over their sum.
  const spent = cpuSpent(connectCpu0, connectCpu1);
  const perSocket = (name) => (spent[name] * 1000) / sockets;
  point.connect_cpu_ms_per_socket = { server: perSocket('own'), descendants: perSocket('descendants'), loadgen: perSocket('loadgen') };
  point.connect = {
    connected: connected.connected,
    refused: connected.refused,
    seconds: connected.seconds,
    sockets_per_s: connected.sockets_per_s,
    handshake: latencySummary(connected.handshake_ms),
  };
  console.log(
    `${label.padEnd(17)} ${sockets} sockets in ${rooms} rooms connected in ${fmt(point.connect.seconds)} s (handshake to session event p50 ${fmt(point.connect.handshake.p50_ms)} ms, p99 ${fmt(point.connect.handshake.p99_ms)} ms)`,
  );
  point.rss_connected_mib = await settledRssMiB(pid);
  point.rss_per_socket_kib = ((point.rss_connected_mib - point.rss_before_mib) * 1024) / sockets;

  if (prepare) point.prepare = await prepare(roomIds, loadgen);

  const cpu0 = cpuOf(pid);
  const wall0 = performance.now();
  const messagesFrom = profileClockUs();
  if (onHost) waits?.open(`${label}: messages`);
  const reply = await ask(loadgen, { type: 'run', messages, rate, seed, drainMs: 30_000 }, 'result', (messages / rate) * 1000 + 120_000);
  waits?.close();
  if (onHost) hostWindows.messages.push([messagesFrom, profileClockUs()]);
  const wallSeconds = (performance.now() - wall0) / 1000;
  const cpu1 = cpuOf(pid);
  point.rss_after_messages_mib = await settledRssMiB(pid);
  const counters = await ask(loadgen, { type: 'counters' }, 'counters', 10_000);
  const lag = latencySummary(reply.send_lag_ms);
  Object.assign(point, {
    broadcast: latencySummary(reply.latencies_ms),
    ack: latencySummary(reply.ack_ms),
    sent: reply.sent,
    sent_by_role: reply.sent_by_role,
    acked: reply.acked,
    refused: reply.refused,
    deliveries_expected: reply.deliveries_expected,
    deliveries_received: reply.deliveries_received,
    deliveries_lost: reply.deliveries_expected - reply.deliveries_received,
    duplicates: reply.duplicates,
    messages_fully_delivered: reply.messages_fully_delivered,
    messages_per_s: reply.sent / reply.send_seconds,
    deliveries_per_s: reply.deliveries_received / (reply.send_seconds + reply.drain_ms / 1000),
    send_lag: { p50_ms: lag.p50_ms, p99_ms: lag.p99_ms, max_ms: lag.max_ms },
    drain_ms: reply.drain_ms,
    cpu: {
      wall_seconds: wallSeconds,
      server_percent: (100 * (cpu1.own - cpu0.own)) / wallSeconds,
      server_descendants_percent: (100 * (cpu1.descendants - cpu0.descendants)) / wallSeconds,
      loadgen_percent: (100 * reply.loadgen_cpu_seconds) / wallSeconds,
    },
    client_counters: counters,
  });
  const b = point.broadcast;
  console.log(
    `${label.padEnd(17)} ${fmt(point.messages_per_s)} msg/s  broadcast p50 ${fmt(b.p50_ms)} ms  p99 ${fmt(b.p99_ms)} ms  max ${fmt(b.max_ms)} ms  ` +
      `deliveries ${point.deliveries_received}/${point.deliveries_expected}  refused ${reply.sent - reply.acked + Object.values(reply.refused).reduce((a, n) => a + n, 0)}  ` +
      `RSS ${fmt(point.rss_before_mib)} -> ${fmt(point.rss_connected_mib)} MiB (${fmt(point.rss_per_socket_kib)} KiB/socket)  CPU ${fmt(point.cpu.server_percent, 0)}%`,
  );
  await stopHelper(loadgen);
  point.rss_disconnected_mib = await settledRssMiB(pid);
  return point;
}

// ---- the run ----
const versionOf = (from, pkg) => JSON.parse(readFileSync(createRequire(from).resolve(`${pkg}/package.json`), 'utf8')).version;
const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  sockets,
  sessions,
  sockets_per_session: sockets / sessions,
  messages,
  rate_per_s: rate,
  settle_seconds: settleSeconds,
  connect_concurrency: connectConcurrency,
  warmup_sockets: warmupSockets,
  seed,
  operator_sessions: operatorSessions,
  operator_point_customer_sockets: operatorCustomers,
  operator_messages: operatorMessages,
  versions: {
    host_socket_io: versionOf(path.join(root, 'host/dist/ws/gateway.js'), 'socket.io'),
    baseline_socket_io: versionOf(path.join(here, 'baseline.mjs'), 'socket.io'),
    socket_io_client: versionOf(path.join(here, 'clients.mjs'), 'socket.io-client'),
  },
};

/** Host/baseline ratios of one point. */
const ratiosOf = (b, h) => ({
  broadcast_p50: ratio(h.broadcast.p50_ms, b.broadcast.p50_ms),
  broadcast_p99: ratio(h.broadcast.p99_ms, b.broadcast.p99_ms),
  broadcast_max: ratio(h.broadcast.max_ms, b.broadcast.max_ms),
  ack_p50: ratio(h.ack.p50_ms, b.ack.p50_ms),
  messages_per_s: ratio(h.messages_per_s, b.messages_per_s),
  server_cpu: ratio(h.cpu.server_percent, b.cpu.server_percent),
  rss_per_socket: ratio(h.rss_per_socket_kib, b.rss_per_socket_kib),
  connect_sockets_per_s: ratio(h.connect.sockets_per_s, b.connect.sockets_per_s),
});
const customersPoint = { rooms: sessions, customers: sockets, messages };
const operatorsPoint = { rooms: operatorSessions, customers: operatorCustomers, messages: operatorMessages };

async function main() {
  const baseline = await startHelper(path.join(here, 'baseline.mjs'));
  const baselineUrl = `http://127.0.0.1:${baseline.port}`;
  console.log(`baseline ${baselineUrl} (pid ${baseline.child.pid})`);
  const onBaseline = { url: baselineUrl, pid: baseline.child.pid };
  summary.customers = { baseline: await measure('baseline', { ...onBaseline, ...customersPoint }) };
  if (operatorSessions) {
    const operator = { query: { role: 'operator', operator_id: 'bench-operator', operator_name: 'Bench' } };
    summary.operators = { baseline: await measure('baseline operators', { ...onBaseline, ...operatorsPoint, operator }) };
  }
  await stopHelper(baseline.child);

  console.log('starting the host on a fresh data dir ...');
  const host = await startHost({ name: 'ws', env: adminEnv(ADMIN), nodeArgs: profile?.nodeArgs });
  console.log(
    `host ${host.url} healthy in ${(host.bootMs / 1000).toFixed(1)} s (pid ${host.pid}; host, Postgres, Chroma: ${host.descendants.size + 1} processes)`,
  );
  summary.host_boot_ms = host.bootMs;
  if (process.argv.includes('--pg-waits')) waits = await startPgWaits(host);
  const admin = await adminClient(host.url, ADMIN);
  const agent = await admin.request('POST', '/agents', {
    name: 'bench-ws',
    agent_type: 'chat',
    public_access_mode: 'public_anonymous',
    human_takeover_enabled: true,
  });
  // Over REST the administrator takes each session over; an operator socket naming the same id owns it too.
  const takeover = async (roomIds, loadgen) => {
    const t0 = performance.now();
    await eachLimited(roomIds, 10, (id) => admin.request('POST', `/sessions/${encodeURIComponent(id)}/takeover`, {}));
    const seconds = (performance.now() - t0) / 1000;
    const status = await ask(loadgen, { type: 'await-status', status: 'HUMAN_ACTIVE', timeoutMs: 60_000 }, 'status', 70_000);
    if (status.behind) throw new Error(`${status.behind} sockets never saw their session HUMAN_ACTIVE`);
    console.log(`host              ${roomIds.length} sessions taken over in ${fmt(seconds)} s; every socket saw HUMAN_ACTIVE`);
    return { takeovers: roomIds.length, seconds };
  };
  // Public customers join only sessions the host issued them.
  const startSession = async () => (await (await fetch(`${host.url}/public/agents/${agent.agent_id}/sessions`, { method: 'POST' })).json()).session_id;
  const onHost = { url: host.url, pid: host.pid, agentId: agent.agent_id, prepare: takeover, startSession };
  summary.customers.host = await measure('host', { ...onHost, ...customersPoint });
  summary.customers.ratios = ratiosOf(summary.customers.baseline, summary.customers.host);
  if (operatorSessions) {
    const operator = { query: { role: 'operator', operator_id: admin.id, operator_name: 'Bench' }, cookie: admin.cookie };
    summary.operators.host = await measure('host operators', { ...onHost, ...operatorsPoint, operator });
    summary.operators.ratios = ratiosOf(summary.operators.baseline, summary.operators.host);
  }

  if (waits) {
    summary.pg_waits = waits.report();
    await waits.stop();
  }

  // The host stores every message before broadcasting it: count them in the embedded Postgres.
  const points = [summary.customers.host, summary.operators?.host].filter(Boolean);
  const sentBy = (role) => points.reduce((n, p) => n + (p.sent_by_role[role] ?? 0), 0);
  const db = await hostDatabase(host);
  try {
    // The rooms are public sessions of the bench agent, issued by the host.
    const { rows } = await db.query(
      'SELECT m.role, count(*)::int AS n FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id WHERE s.agent_id = $1 GROUP BY m.role ORDER BY m.role',
      [agent.agent_id],
    );
    const turns = (await db.query('SELECT count(*)::int AS n FROM conversation_turns')).rows[0].n;
    const byRole = Object.fromEntries(rows.map((r) => [r.role, r.n]));
    summary.persistence = {
      chat_messages_by_role: byRole,
      conversation_turns: turns,
      sent_by_customers: sentBy('customer'),
      sent_by_operators: sentBy('operator'),
      stored_match_sent: (byRole.user ?? 0) === sentBy('customer') && (byRole.agent ?? 0) === sentBy('operator'),
    };
  } finally {
    await db.end();
  }
  summary.host_output_tail = host.output().slice(-4000);
  summary.host_stop = await stopHost(host);
}

/** The table of one point: baseline, host and their ratio for each figure. */
function pointTable(caption, { baseline: b, host: h }, { memory = true } = {}) {
  const row = (label, figure, digits = 1) => [label, fmt(figure(b), digits), fmt(figure(h), digits), fmt(ratio(figure(h), figure(b)), 2)];
  const memoryRows = [
    row('server RSS before connecting MiB', (s) => s.rss_before_mib),
    row('server RSS connected MiB', (s) => s.rss_connected_mib),
    row('RSS per socket KiB', (s) => s.rss_per_socket_kib),
  ];
  return markdownTable(
    caption,
    ['', 'baseline', 'host', 'host/baseline'],
    [
      row('broadcast latency p50 ms', (s) => s.broadcast.p50_ms),
      row('broadcast latency p99 ms', (s) => s.broadcast.p99_ms),
      row('broadcast latency max ms', (s) => s.broadcast.max_ms),
      row('sender ack p50 ms', (s) => s.ack.p50_ms),
      row('messages/s sent', (s) => s.messages_per_s),
      ['deliveries received/expected', `${b.deliveries_received}/${b.deliveries_expected}`, `${h.deliveries_received}/${h.deliveries_expected}`, ''],
      row('server CPU % during messages', (s) => s.cpu.server_percent, 0),
      row('  with its Postgres and Chroma', (s) => s.cpu.server_percent + s.cpu.server_descendants_percent, 0),
      ...(memory ? memoryRows : []),
      ...(b.cold_connect && h.cold_connect ? [row(`first ${warmupSockets} sockets (warm-up) connect sockets/s`, (s) => s.cold_connect.sockets_per_s)] : []),
      row('connect sockets/s', (s) => s.connect.sockets_per_s),
      row('connect CPU ms per socket: server', (s) => s.connect_cpu_ms_per_socket.server, 2),
      row('  its Postgres and Chroma', (s) => s.connect_cpu_ms_per_socket.descendants, 2),
      row('  load generator', (s) => s.connect_cpu_ms_per_socket.loadgen, 2),
    ],
  );
}

function report() {
  if (profile) {
    summary.host_cpu_profile = {};
    for (const [phase, windows] of Object.entries(hostWindows)) {
      console.log(`\nwhile its sockets ${phase === 'connect' ? 'connected' : 'sent messages'}:`);
      printHottest((summary.host_cpu_profile[phase] = hottest(profile.dir, 15, windows)));
    }
  }
  const cpus = os.cpus().length;
  const tables = [
    pointTable(
      `socket.io, ${sockets} customer sockets in ${sessions} rooms, ${messages} messages at ${rate}/s from random sockets (${cpus} CPUs, load generator on the same machine)`,
      summary.customers,
    ),
  ];
  if (summary.operators) {
    const o = summary.operators.host;
    tables.push(
      pointTable(
        `with operators: ${o.rooms} rooms of ${o.customer_sockets / o.rooms} customer sockets and 1 operator socket (/ws/, administrator cookie), ${operatorMessages} messages at ${rate}/s from random sockets of either kind`,
        summary.operators,
        { memory: false }, // too few sockets for RSS deltas to mean much; they are in the JSON
      ),
    );
  }
  if (summary.pg_waits) tables.push((summary.pg_waits_table = pgWaitsTable(summary.pg_waits)));
  summary.table = tables.join('\n\n');
  console.log(`\n${summary.table}\n`);
  const p = summary.persistence;
  for (const [name, point] of Object.entries({ customers: summary.customers, operators: summary.operators })) {
    if (!point) continue;
    for (const [side, s] of [
      ['baseline', point.baseline],
      ['host', point.host],
    ]) {
      const c = s.client_counters;
      console.log(
        `${name} ${side}: sent ${JSON.stringify(s.sent_by_role)}, lost ${s.deliveries_lost}, duplicates ${s.duplicates}, refused ${JSON.stringify(s.refused)}, unexpected message events ${c.unexpected_messages}, ` +
          `error events ${c.error_events}, disconnects ${c.disconnects}; CPU % Postgres ${fmt(s.cpu.server_descendants_percent, 0)}, load generator ${fmt(s.cpu.loadgen_percent, 0)}; ` +
          `RSS after messages ${fmt(s.rss_after_messages_mib)} MiB, after disconnecting ${fmt(s.rss_disconnected_mib)} MiB`,
      );
    }
  }
  console.log(
    `persisted: ${JSON.stringify(p.chat_messages_by_role)} messages in the bench sessions, ${p.conversation_turns} conversation_turns; ` +
      `${p.sent_by_customers} sent by customers and ${p.sent_by_operators} by operators: ${p.stored_match_sent ? 'match' : 'MISMATCH'}`,
  );
  console.log(
    `host stop: exit ${summary.host_stop?.exit} in ${summary.host_stop?.stop_ms} ms; leftover processes killed: ${summary.host_stop?.leftovers.length ?? 0}`,
  );
}

await runBench('ws', { summary, main, report });
process.exit(0);
