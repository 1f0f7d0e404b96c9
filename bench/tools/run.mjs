#!/usr/bin/env node
// Tool-call benchmark: what the host adds to one MCP tool call, against a direct MCP SDK client calling the same
// stdio server, in one run.
//   server: the official @modelcontextprotocol/server-everything over stdio, tool `echo` ({message}); each side
//           starts its own copy and keeps it for the run (the host pools its connection)
//   direct: the MCP SDK's `Client` over `StdioClientTransport`, `tools/call echo`, in this process
//   host:   `agent-host start` on a fresh data dir (embedded Postgres and Chroma, default configuration); the server
//           registered over REST, then the same tool called two ways:
//             test-call  `POST /mcp-servers/{id}/test-call` (`tools/call`) as the bootstrap administrator: credential
//                        resolution, the tool backend's pooled connection, the admin action audit
//             stream     `POST /stream` with `/echo <text>` on a public chat agent whose quick-match rule maps `/echo`
//                        to `echo`: no model; mount and allowlist checks, the MCP call audit, the turn persisted,
//                        the reply streamed as SSE (timed to the end of the response)
// Each way runs a discarded warm-up, then `--calls` calls by `--concurrency` closed-loop clients. Measured: call
// latency p50/p99/mean/max and calls/s, and the ratios host/direct. Every answer is checked (the echo text) and
// failures are counted, not timed.
// Run by hand after `npm run build`:
//   node bench/tools/run.mjs [--calls 2000] [--warmup 100] [--concurrency 1]
// Writes bench/results/tools.json.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { adminClient, adminEnv } from '../lib/admin.mjs';
import { arg, machine, root, runBench, startHost, stopHost } from '../lib/host.mjs';
import { fmt, latencySummary, markdownTable, ratio } from '../lib/stats.mjs';

const calls = Number(arg('--calls', 2000));
const warmup = Number(arg('--warmup', 100));
const concurrency = Number(arg('--concurrency', 1));
if (!(Number.isInteger(calls) && calls > 0) || !(Number.isInteger(warmup) && warmup >= 0) || !(Number.isInteger(concurrency) && concurrency > 0)) {
  console.error('usage: node bench/tools/run.mjs [--calls 2000] [--warmup 100] [--concurrency 1]');
  process.exit(2);
}
const ADMIN = { username: 'bench-admin', password: 'bench-tools-password-0123456789' };
const EVERYTHING = { command: process.execPath, args: [path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
const TEXT = 'bench';
const EXPECTED = `Echo: ${TEXT}`;

/**
 * `total` calls of `call()` by `concurrency` closed-loop clients. `call` resolves to null on a correct answer, or
 * to what was wrong. Resolves with the latencies of the correct calls, the failures, and the wall time.
 */
async function closedLoop(call, total) {
  const latencies = [];
  const failures = new Map();
  let issued = 0;
  const started = performance.now();
  const client = async () => {
    while (issued < total) {
      issued++;
      const t0 = performance.now();
      let problem;
      try {
        problem = await call();
      } catch (error) {
        problem = error.message;
      }
      if (problem === null) latencies.push(performance.now() - t0);
      else failures.set(problem, (failures.get(problem) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return { latencies, failures: Object.fromEntries(failures), seconds: (performance.now() - started) / 1000 };
}

/** A discarded warm-up, then the measured calls; the summary of one way of calling. */
async function measure(label, call) {
  if (warmup) await closedLoop(call, warmup);
  const run = await closedLoop(call, calls);
  const summary = {
    ...latencySummary(run.latencies),
    calls_per_s: run.latencies.length / run.seconds,
    failed: calls - run.latencies.length,
    failures: run.failures,
    seconds: run.seconds,
  };
  console.log(
    `${label.padEnd(10)} p50 ${fmt(summary.p50_ms, 2).padStart(8)} ms  p99 ${fmt(summary.p99_ms, 2).padStart(8)} ms  ${fmt(summary.calls_per_s).padStart(8)} calls/s  failed ${summary.failed}`,
  );
  return summary;
}

/** The direct side: one MCP SDK client on its own copy of the server. */
async function direct() {
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ ...EVERYTHING, stderr: 'ignore' }));
  try {
    return await measure('direct', async () => {
      const result = await client.callTool({ name: 'echo', arguments: { message: TEXT } });
      return result.content?.[0]?.text === EXPECTED ? null : `unexpected answer: ${JSON.stringify(result).slice(0, 200)}`;
    });
  } finally {
    await client.close();
  }
}

/** The text of an SSE reply's `token` events, or what went wrong. */
function sseReply(text) {
  let reply = '';
  let done = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const event = JSON.parse(line.slice(5));
    if (event.type === 'token') reply += event.content;
    else if (event.type === 'error') return { error: String(event.content) };
    else if (event.type === 'done') done = true;
  }
  return done ? { reply } : { error: 'no done event' };
}

const summary = { date: new Date().toISOString(), machine: machine(), calls, warmup, concurrency, tool: 'server-everything echo over stdio' };

async function main() {
  console.log(`${calls} calls after ${warmup} warm-up calls, ${concurrency} closed-loop client(s) per way\n`);
  summary.direct = await direct();

  const host = await startHost({ name: 'tools', env: adminEnv(ADMIN) });
  summary.host_boot_ms = host.bootMs;
  const admin = await adminClient(host.url, ADMIN);
  const server = await admin.request('POST', '/mcp-servers', { name: 'everything', transport_type: 'stdio', connection_config: EVERYTHING });
  const agent = await admin.request('POST', '/agents', {
    name: 'bench-tools',
    agent_type: 'chat',
    public_access_mode: 'public_anonymous',
    mcp_response_config: { quick_match_rules: [{ prefix: '/echo', mcp_server_id: server.mcp_server_id, tool_name: 'echo', suffix_parameter_name: 'message' }] },
  });
  await admin.request('POST', `/agents/${agent.agent_id}/mcp-mounts`, { mcp_server_id: server.mcp_server_id, allowed_tools: ['echo'] });

  summary.host_test_call = await measure('test-call', async () => {
    const answer = await admin.request('POST', `/mcp-servers/${server.mcp_server_id}/test-call`, {
      action: 'tools/call',
      tool_name: 'echo',
      arguments: { message: TEXT },
    });
    return answer.status === 'success' && answer.result === EXPECTED ? null : `unexpected answer: ${JSON.stringify(answer).slice(0, 200)}`;
  });

  // Quick match answers the raw JSON of the tool's result, here a JSON string.
  const expectedReply = JSON.stringify(EXPECTED);
  summary.host_stream = await measure('stream', async () => {
    const res = await fetch(`${host.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin.cookie },
      body: JSON.stringify({ thread_id: `bench-tools-${randomUUID()}`, agent_id: agent.agent_id, message: `/echo ${TEXT}` }),
    });
    if (res.status !== 200) return `HTTP ${res.status}`;
    const { reply, error } = sseReply(await res.text());
    return error ?? (reply === expectedReply ? null : `unexpected reply: ${reply.slice(0, 200)}`);
  });

  const audits = await admin.request('GET', `/agents/${agent.agent_id}/mcp-calls?limit=1`);
  summary.last_stream_audit = audits.items[0] && { tool_name: audits.items[0].tool_name, status: audits.items[0].status, origin: audits.items[0].origin };
  summary.host_stop = await stopHost(host);

  const d = summary.direct;
  for (const way of ['host_test_call', 'host_stream']) {
    const h = summary[way];
    h.ratios = { p50: ratio(h.p50_ms, d.p50_ms), p99: ratio(h.p99_ms, d.p99_ms), calls_per_s: ratio(h.calls_per_s, d.calls_per_s) };
    h.overhead_p50_ms = h.p50_ms === null || d.p50_ms === null ? null : h.p50_ms - d.p50_ms;
  }
}

function report() {
  const row = (name, s, base) => [
    name,
    fmt(s.p50_ms, 2),
    fmt(s.p99_ms, 2),
    fmt(s.calls_per_s),
    base ? fmt(ratio(s.p50_ms, base.p50_ms), 2) : '1.00',
    base ? fmt(ratio(s.p99_ms, base.p99_ms), 2) : '1.00',
    base ? fmt(ratio(s.calls_per_s, base.calls_per_s), 2) : '1.00',
    String(s.failed),
  ];
  console.log(
    '\n' +
      markdownTable(
        `tools/call echo (server-everything, stdio): ${calls} calls after ${warmup} warm-up, ${concurrency} client(s); ratios host/direct`,
        ['way', 'p50 ms', 'p99 ms', 'calls/s', 'p50 ratio', 'p99 ratio', 'calls/s ratio', 'failed'],
        [
          row('direct MCP SDK client', summary.direct),
          row('host test-call', summary.host_test_call, summary.direct),
          row('host /stream quick match', summary.host_stream, summary.direct),
        ],
      ),
  );
  console.log(
    `\nhost overhead per call at p50: test-call ${fmt(summary.host_test_call.overhead_p50_ms, 2)} ms, /stream quick match ${fmt(summary.host_stream.overhead_p50_ms, 2)} ms`,
  );
}

await runBench('tools', { summary, main, report });
