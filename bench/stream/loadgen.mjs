// Closed-loop load generator of the stream benchmark, run as a child of run.mjs (IPC) so it stays off
// the servers' event loops. On {type:'run', url, concurrency, seconds, warmupSeconds, label, fields} it runs
// `concurrency` clients, each sending POST /stream, reading the SSE reply to its end and sending the
// next, for a warm-up (discarded) then `seconds`; it answers with the time to first `token` event
// and to completion of every reply that ended with `done` and no `error` within the window.
// `fields` go into every request body besides `thread_id` and `message` (the model, or an agent_id); `headers`
// into every request (an administrator's cookie); with `issued`, no `thread_id` is sent (an anonymous client's
// session is issued by the host).
// With `socket` ({agentId}) each client is instead a customer of that public agent over socket.io: a session the host
// issues (`POST /public/agents/{id}/sessions`), its socket on `/public/ws/<session>`, then one `user_message` at a
// time, done when it is acknowledged; the customer gets no token stream, so its time to first token is the time
// to the reply's `message` event. A client keeps its session and socket across its turns, as a customer does.
// On {type:'verify', url, fields} it sends one request and answers with what came back.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { io } from 'socket.io-client';

const REQUEST_TIMEOUT_MS = 30_000;
let sequence = 0;

/** One POST /stream; resolves (never rejects) with its outcome. */
function request(agent, url, label, { fields, headers = {}, issued = false }) {
  const body = JSON.stringify({ ...(!issued && { thread_id: `bench-${label}-${process.pid}-${++sequence}` }), message: 'hi', ...fields });
  const started = performance.now();
  return new Promise((resolve) => {
    const out = { ttft: null, total: null, tokens: 0, text: '', error: null, done: false, status: 0, ended: 0 };
    const finish = (failure) => {
      if (out.ended) return;
      out.ended = performance.now();
      out.total = out.ended - started;
      if (failure && !out.error) out.error = failure;
      resolve(out);
    };
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: '/stream',
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        out.status = res.statusCode;
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            for (const line of block.split('\n')) {
              if (!line.startsWith('data:')) continue;
              let event;
              try {
                event = JSON.parse(line.slice(5));
              } catch {
                out.error ??= `unparsable event: ${line.slice(0, 80)}`;
                continue;
              }
              if (event.type === 'token') {
                if (out.ttft === null) out.ttft = performance.now() - started;
                out.tokens++;
                out.text += event.content;
              } else if (event.type === 'error') out.error ??= String(event.content);
              else if (event.type === 'done') out.done = true;
            }
          }
        });
        res.on('end', () => finish(res.statusCode === 200 ? null : `HTTP ${res.statusCode}`));
        res.on('error', (e) => finish(e.message));
        res.on('aborted', () => finish('aborted'));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('request timed out')));
    req.on('error', (e) => finish(e.message));
    req.end(body);
  });
}

/** A customer of the public agent `agentId` on its own socket: `turn()` sends one message, `close()` leaves. */
async function socketCustomer(url, agentId) {
  const issued = await fetch(new URL(`/public/agents/${agentId}/sessions`, url), { method: 'POST' });
  if (issued.status !== 201) throw new Error(`session not issued: HTTP ${issued.status} ${await issued.text()}`);
  const { session_id: sessionId } = await issued.json();
  const socket = io(`${url.origin}/public/ws/${encodeURIComponent(sessionId)}`, { transports: ['websocket'], forceNew: true, reconnection: false });
  await new Promise((resolve, reject) => {
    socket.once('session', resolve);
    socket.once('connect_error', reject);
  });
  let pending = null;
  const settle = (failure) => {
    const current = pending;
    if (!current) return;
    pending = null;
    current.out.ended = performance.now();
    current.out.total = current.out.ended - current.started;
    if (failure) current.out.error ??= failure;
    else if (current.out.ttft === null) current.out.error = 'acknowledged without a reply';
    else current.out.done = true;
    current.resolve(current.out);
  };
  socket.on('message', ({ message }) => {
    if (!pending || message.role !== 'assistant') return;
    pending.out.ttft = performance.now() - pending.started;
    pending.out.text = message.content;
  });
  socket.on('error', (e) => settle(String(e?.detail ?? e)));
  socket.on('disconnect', (reason) => settle(`disconnected: ${reason}`));
  return {
    turn: () =>
      new Promise((resolve) => {
        const out = { ttft: null, total: null, tokens: null, text: '', error: null, done: false, status: 200, ended: 0 };
        pending = { resolve, out, started: performance.now() };
        const timer = setTimeout(() => settle('turn timed out'), REQUEST_TIMEOUT_MS);
        socket.emit('user_message', { content: 'hi' }, (ack) => {
          clearTimeout(timer);
          settle(ack?.ok ? null : String(ack?.detail ?? 'refused'));
        });
      }),
    close: () => socket.close(),
  };
}

async function closedLoop({ url, concurrency, seconds, label, ...caller }, record) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  // Customers over socket.io connect before the clock starts: the turns are measured, not the handshakes.
  const customers = caller.socket ? await Promise.all(Array.from({ length: concurrency }, () => socketCustomer(url, caller.socket.agentId))) : [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const counts = { sent: 0, ok: 0, failed: 0, late: 0 };
  const failures = new Map();
  const client = async (index) => {
    while (performance.now() < deadline) {
      counts.sent++;
      const r = caller.socket ? await customers[index].turn() : await request(agent, url, label, caller);
      const ok = r.done && r.error === null && r.status === 200;
      if (!ok) {
        counts.failed++;
        const key = r.error ?? (r.done ? 'unknown' : 'no done event');
        failures.set(key, (failures.get(key) ?? 0) + 1);
      } else counts.ok++;
      if (r.ended > deadline) counts.late++;
      else if (ok && record) record(r);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => client(index)));
  agent.destroy();
  customers.forEach((c) => c.close());
  return { counts, failures: Object.fromEntries(failures), elapsed_ms: performance.now() - started };
}

process.on('message', async (message) => {
  try {
    if (message.type === 'verify') {
      const url = new URL(message.url);
      let r;
      if (message.socket) {
        const customer = await socketCustomer(url, message.socket.agentId);
        r = await customer.turn();
        customer.close();
      } else {
        const agent = new http.Agent({ keepAlive: false });
        r = await request(agent, url, message.label ?? 'verify', message);
        agent.destroy();
      }
      process.send({ type: 'verified', result: r });
    } else if (message.type === 'run') {
      const url = new URL(message.url);
      let warmup = null;
      if (message.warmupSeconds > 0) warmup = await closedLoop({ ...message, url, seconds: message.warmupSeconds, label: `${message.label}-warmup` }, null);
      const ttft = [];
      const total = [];
      const tokenCounts = {};
      const measured = await closedLoop({ ...message, url }, (r) => {
        ttft.push(r.ttft ?? r.total);
        total.push(r.total);
        tokenCounts[r.tokens] = (tokenCounts[r.tokens] ?? 0) + 1;
      });
      process.send({ type: 'result', warmup, measured, ttft, total, token_counts: tokenCounts });
    }
  } catch (error) {
    process.send({ type: 'failed', error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
