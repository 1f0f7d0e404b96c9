// Load generator of the WebSocket benchmark, run as a child of run.mjs (IPC) so it stays off the servers'
// event loops. Each socket is its own socket.io connection (WebSocket transport, no multiplexing, no
// reconnection). Commands:
//   {type:'connect', url, sockets:[{room, role, path, query, cookie?}], concurrency, timeoutMs}
//       connects every socket, at most `concurrency` handshakes at a time, and waits until each has its
//       `session` event; answers `connected` with the time it took and the refusals
//   {type:'await-status', status, timeoutMs}
//       waits until every socket's latest `session` event has `status`; answers `status`
//   {type:'run', messages, rate, seed, drainMs}
//       sends `messages` `user_message`s at `rate` per second (open loop: on a fixed schedule, whatever the
//       replies do) from sockets drawn at random (seeded), each with a unique id in its content; every
//       socket of the sender's room should receive it as a `message` event. Answers `result` with the
//       latency of every delivery (receipt - send, both on this process's clock), the acknowledgement
//       latencies and what was lost, late, duplicated or refused
// Disconnecting the IPC channel closes every socket and exits.
import { performance } from 'node:perf_hooks';
import { io } from 'socket.io-client';
import { seededRandom } from '../lib/random.mjs';

const entries = []; // {socket, room, role, status, ready}
const roomSize = new Map();
const counters = { disconnects: 0, error_events: 0, unexpected_messages: 0 };
const errorDetails = new Map();
let closing = false;
let run = null; // the current run's bookkeeping, see `sendAll`

const note = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);

function onMessage(payload) {
  const now = performance.now();
  const match = run && /^bench-ws (\d+):(\d+)$/.exec(payload?.message?.content ?? '');
  const sent = match && Number(match[1]) === run.id ? run.sent[Number(match[2])] : undefined;
  if (!sent) return void counters.unexpected_messages++;
  sent.received++;
  if (sent.received > sent.expected) run.duplicates++;
  run.latencies.push(now - sent.at);
}

/** Connects one socket and resolves once it has its `session` event (or was refused). */
function connectOne(url, spec, timeoutMs) {
  const entry = { socket: null, room: spec.room, role: spec.role, status: null, ready: false };
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (error) => {
      clearTimeout(timer);
      resolve({ entry, error, ms: performance.now() - started });
    };
    const timer = setTimeout(() => done(`no session event in ${timeoutMs} ms`), timeoutMs);
    const socket = io(url + spec.path, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      timeout: timeoutMs,
      query: spec.query,
      ...(spec.cookie && { extraHeaders: { cookie: spec.cookie } }),
    });
    entry.socket = socket;
    socket.on('session', (session) => {
      entry.status = session.status;
      if (!entry.ready) {
        entry.ready = true;
        done(null);
      }
    });
    socket.on('message', onMessage);
    socket.on('error', (e) => {
      counters.error_events++;
      note(errorDetails, String(e?.detail ?? e));
    });
    socket.on('connect_error', (e) => done(e.message));
    socket.on('disconnect', () => {
      if (!closing) counters.disconnects++;
    });
  });
}

async function connectAll({ url, sockets, concurrency, timeoutMs }) {
  const started = performance.now();
  const refusals = new Map();
  const handshakeMs = [];
  const connected = []; // in the order of `sockets`, so that a seed draws the same senders on every server
  let next = 0;
  const worker = async () => {
    while (next < sockets.length) {
      const index = next++;
      const { entry, error, ms } = await connectOne(url, sockets[index], timeoutMs);
      if (error) {
        note(refusals, error);
        entry.socket.close();
        continue;
      }
      connected[index] = entry;
      roomSize.set(entry.room, (roomSize.get(entry.room) ?? 0) + 1);
      handshakeMs.push(ms);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, sockets.length) }, worker));
  entries.push(...connected.filter(Boolean));
  return { connected: entries.length, refused: Object.fromEntries(refusals), elapsed_ms: performance.now() - started, handshake_ms: handshakeMs };
}

async function awaitStatus({ status, timeoutMs }) {
  const deadline = performance.now() + timeoutMs;
  const behind = () => entries.filter((e) => e.status !== status).length;
  while (behind() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return { status, behind: behind() };
}

async function sendAll({ messages, rate, seed, drainMs }) {
  const pick = seededRandom(seed); // both servers get the same senders in the same order
  run = { id: Math.floor(Math.random() * 1e9), sent: [], latencies: [], duplicates: 0 };
  const ackMs = [];
  const refusals = new Map();
  const sentByRole = {};
  let acked = 0;
  const lagMs = [];
  const cpu0 = process.cpuUsage();
  const interval = 1000 / rate;
  const t0 = performance.now() + 50;
  const send = (i) => {
    const entry = entries[Math.floor(pick() * entries.length)];
    const at = performance.now();
    lagMs.push(at - (t0 + i * interval));
    run.sent[i] = { at, expected: roomSize.get(entry.room), received: 0 };
    sentByRole[entry.role] = (sentByRole[entry.role] ?? 0) + 1;
    entry.socket.emit('user_message', { content: `bench-ws ${run.id}:${i}` }, (ack) => {
      acked++;
      ackMs.push(performance.now() - at);
      if (!ack?.ok) note(refusals, String(ack?.detail));
    });
  };
  await new Promise((resolve) => {
    let i = 0;
    const tick = () => {
      while (i < messages && t0 + i * interval <= performance.now()) send(i++);
      if (i >= messages) return resolve();
      setTimeout(tick, Math.max(0, t0 + i * interval - performance.now()));
    };
    tick();
  });
  const lastSend = performance.now();
  const expected = run.sent.reduce((n, s) => n + s.expected, 0);
  const received = () => run.latencies.length - run.duplicates;
  while ((received() < expected || acked < messages) && performance.now() - lastSend < drainMs) await new Promise((r) => setTimeout(r, 20));
  const cpu = process.cpuUsage(cpu0);
  const result = {
    sent: messages,
    sent_by_role: sentByRole,
    send_seconds: (lastSend - run.sent[0].at) / 1000,
    drain_ms: performance.now() - lastSend,
    send_lag_ms: lagMs,
    deliveries_expected: expected,
    deliveries_received: received(),
    duplicates: run.duplicates,
    messages_fully_delivered: run.sent.filter((s) => s.received >= s.expected).length,
    latencies_ms: run.latencies,
    acked,
    ack_ms: ackMs,
    refused: Object.fromEntries(refusals),
    loadgen_cpu_seconds: (cpu.user + cpu.system) / 1e6,
  };
  run = null;
  return result;
}

const commands = {
  connect: async (m) => ({ type: 'connected', ...(await connectAll(m)) }),
  'await-status': async (m) => ({ type: 'status', ...(await awaitStatus(m)) }),
  run: async (m) => ({ type: 'result', ...(await sendAll(m)) }),
  counters: async () => ({
    type: 'counters',
    ...counters,
    error_details: Object.fromEntries(errorDetails),
    open: entries.filter((e) => e.socket.connected).length,
  }),
};
process.on('message', async (message) => {
  try {
    process.send(await commands[message.type](message));
  } catch (error) {
    process.send({ type: 'failed', error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => {
  closing = true;
  for (const { socket } of entries) socket.close();
  setTimeout(() => process.exit(0), 200).unref();
});
process.send({ type: 'ready' });
