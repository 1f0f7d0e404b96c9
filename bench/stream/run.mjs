#!/usr/bin/env node
// Stream benchmark: turns/s and time to first token of POST /stream, host against two bare baselines, all answering
// from the same zero-latency fake model, in one run.
//   fake model: fake-model.mjs, OpenAI-compatible, 20 tokens per completion with usage (child process)
//   baselines:  baseline.mjs, a minimal restify SSE server, no persistence (a child process each): `openai_sdk` on the
//               official openai SDK (the floor the host is held to), `langchain` on LangChain `ChatOpenAI`
//   host:       `agent-host start` on a fresh data dir (embedded Postgres and Chroma), `openai` provider
//               (models-openai) pointed at the fake model; every turn persisted in Postgres
//   --langchain-host: a second host, the same but with models-openai left out, so LangChain's `openai` provider
//               answers: what the provider changes, in the same run
//   --leak-check N: after the points, the host alone at c=64 until N turns more, its RSS sampled: the median RSS of the
//               10 s after the first 10,000 turns against that of the last 10 s (issue 25: within 10%)
//   load:       loadgen.mjs, closed-loop clients (child process), each concurrency point run on the
//               baseline then the host, with a discarded warm-up before each
//   --rounds N: each point measures its sides in turn N times (`--seconds` each, after its warm-up), and a side's
//               figures are over all its rounds: the sides are then measured over the same stretch of time, so a
//               shared machine's drift moves the ratios less
// Run by hand after `npm run build`:
//   node bench/stream/run.mjs [--seconds 10] [--warmup 2] [--rounds 1] [--concurrency 1,16,64] [--agent [--grounding] [--knowledge [--knowledge-chunks N]]] [--langchain-host] [--leak-check N] [--profile] [--pg-waits]
// With --agent the host's requests name an agent (public, chat, primary model = the fake model, nothing
// mounted) instead of overriding the model: the agent load, its limits and its mount lookups are measured too. The
// same run measures the host's two other paths as sides of their own: the model path (`model`, as without --agent) and
// the agent's customers over socket.io (`socket`, loadgen.mjs), and sets every path against the openai SDK proxy.
// With --grounding too, the same agent with `response_grounding_config` (balanced, general knowledge allowed, so
// the model is asked without evidence) is measured as a third side: what grounding adds to a turn, in one run.
// With --knowledge too, an agent with one mounted knowledge source (`--knowledge-chunks` generated paragraphs, one
// chunk each, ingested before the run) is a side of its own: each turn searches it (the vector search, and the keyword
// fallback when no vector hit reaches the threshold) before the model is asked.
// With --pg-waits the host's Postgres backends are sampled every 5 ms during each of the host's measured windows
// (lib/pg-waits.mjs): what they waited on (row locks, the WAL, the client) or ran, and in which statement, per side
// and point. The sampler's queries cost Postgres about a tenth of a CPU, which its CPU columns then count.
// Writes bench/results/stream.json (stream-agent.json with --agent; and the host's CPU profile under bench/results/stream-prof/).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  arg,
  ask,
  cpuSeconds,
  cpuSpent,
  forkHelper,
  hostChildMatching,
  hostCpuSeconds,
  hostDatabase,
  machine,
  rssKiB,
  runBench,
  startHelper,
  startHost,
  stopHost,
} from '../lib/host.mjs';
import { adminClient, adminEnv, ingestAndWait } from '../lib/admin.mjs';
import { textGenerator } from '../lib/corpus.mjs';
import { pgWaitsTable, startPgWaits } from '../lib/pg-waits.mjs';
import { hottest, printHottest, profileClockUs, requestedProfile } from '../lib/profile.mjs';
import { fmt, markdownTable, percentile, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(arg('--seconds', 10));
const warmupSeconds = Number(arg('--warmup', 2));
const rounds = Number(arg('--rounds', 1));
const concurrencies = String(arg('--concurrency', '1,16,64')).split(',').map(Number);
const pgWaits = process.argv.includes('--pg-waits');
/** Where the host writes its CPU profile, with --profile. */
let profileDir;
const withAgent = process.argv.includes('--agent');
// With --grounding (and --agent) a second public agent, with a grounding policy, is measured on the same host.
const withGrounding = withAgent && process.argv.includes('--grounding');
// With --knowledge (and --agent) a public agent with one mounted source, likewise.
const withKnowledge = withAgent && process.argv.includes('--knowledge');
const knowledgeChunks = Number(arg('--knowledge-chunks', 1000));
const withLangchainHost = process.argv.includes('--langchain-host');
const leakTurns = process.argv.includes('--leak-check') ? Number(arg('--leak-check', 100_000)) : 0;
const MODEL = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
/** With --agent, the host's sides besides the agent path: the model path, and the agent's customers over socket.io. */
const HOST_PATHS = ['model', 'socket'];
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
if (
  !(seconds > 0) ||
  !(warmupSeconds >= 0) ||
  !(Number.isInteger(rounds) && rounds > 0) ||
  concurrencies.some((c) => !(Number.isInteger(c) && c > 0)) ||
  !(Number.isInteger(knowledgeChunks) && knowledgeChunks > 0)
) {
  console.error(
    'usage: node bench/stream/run.mjs [--seconds N] [--warmup N] [--rounds N] [--concurrency 1,16,64] [--agent [--grounding] [--knowledge [--knowledge-chunks N]]] [--langchain-host] [--leak-check N] [--profile]',
  );
  process.exit(2);
}

/** Adds up two count maps. */
const addCounts = (a, b) => Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, (a[k] ?? 0) + (b[k] ?? 0)]));

/** A side's loadgen replies over the rounds of a point, as one. */
function mergeReplies(a, b) {
  if (!a) return b;
  return {
    ttft: a.ttft.concat(b.ttft),
    total: a.total.concat(b.total),
    measured: { counts: addCounts(a.measured.counts, b.measured.counts), failures: addCounts(a.measured.failures, b.measured.failures) },
    token_counts: addCounts(a.token_counts, b.token_counts),
    warmup: a.warmup && b.warmup ? { counts: addCounts(a.warmup.counts, b.warmup.counts) } : (a.warmup ?? b.warmup),
  };
}

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

// ---- the run ----
/** Per side of the first host, `[fromUs, toUs]` of each of its measured points, for the host's CPU profile. */
const hostWindows = {};
const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  seconds,
  warmup_seconds: warmupSeconds,
  rounds,
  host_requests: withAgent ? 'agent_id of a public chat agent on the fake model' : 'model_provider and model_name, no agent',
  grounded_requests: withGrounding ? 'agent_id of the same agent with response_grounding_config (balanced, general knowledge allowed)' : null,
  knowledge_requests: withKnowledge ? `agent_id of an agent with one mounted source of ${knowledgeChunks} chunks` : null,
  concurrencies,
  points: [],
};

async function main() {
  const model = await startHelper(path.join(here, 'fake-model.mjs'));
  const modelUrl = `http://127.0.0.1:${model.port}/v1`;
  const modelCount = async () => (await ask(model.child, { type: 'count' }, 'count', 5_000)).served;
  const langchainBaseline = await startHelper(path.join(here, 'baseline.mjs'), [modelUrl, 'langchain']);
  const openaiBaseline = await startHelper(path.join(here, 'baseline.mjs'), [modelUrl, 'openai']);
  const baselineUrl = `http://127.0.0.1:${langchainBaseline.port}`;
  const openaiUrl = `http://127.0.0.1:${openaiBaseline.port}`;
  const loadgen = forkHelper(path.join(here, 'loadgen.mjs'));

  console.log(`fake model ${modelUrl}; baselines ${openaiUrl} (openai SDK), ${baselineUrl} (LangChain); starting the host on a fresh data dir ...`);
  const profile = requestedProfile('stream');
  const nodeArgs = profile?.nodeArgs ?? [];
  profileDir = profile?.dir;
  const host = await startHost({
    name: 'stream',
    env: { OPENAI_API_KEY: 'bench-key', 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': JSON.stringify(modelUrl), ...adminEnv(ADMIN) },
    nodeArgs,
  });
  const hostUrl = host.url;
  console.log(`host ${hostUrl} healthy in ${(host.bootMs / 1000).toFixed(1)} s (host, Postgres, Chroma: ${host.descendants.size + 1} processes)`);
  summary.host_boot_ms = host.bootMs;
  const waits = pgWaits ? await startPgWaits(host) : undefined;
  const langchainHost =
    withLangchainHost &&
    (await startHost({
      name: 'stream-langchain',
      env: {
        OPENAI_API_KEY: 'bench-key',
        AGENT_HOST_PLUGINS_DISABLED: 'models-openai',
        'AGENT_HOST__PLUGINS__MODELS-LANGCHAIN__OPENAI_BASE_URL': JSON.stringify(modelUrl),
        ...adminEnv(ADMIN),
      },
    }));

  // Without --agent the host is asked as an administrator (the only caller who may name a model per request and
  // its sessions); with it, as anonymous customers of a public agent, each turn a new session the host issues.
  /** How a host is asked: as its administrator naming the model, or (--agent) as anonymous callers of a public agent. */
  const hostClient = async (url) => {
    const admin = await adminClient(url, ADMIN);
    if (!withAgent) return { admin, client: { fields: MODEL, headers: { cookie: admin.cookie } } };
    const agent = await admin.request('POST', '/agents', { name: 'Bench', agent_type: 'chat', public_access_mode: 'public_anonymous', ...MODEL });
    return { admin, client: { fields: { agent_id: agent.agent_id }, issued: true } };
  };
  const { admin, client: hostSide } = await hostClient(hostUrl);
  const clients = { openai_sdk: { fields: MODEL }, baseline: { fields: MODEL }, host: hostSide };
  if (langchainHost) clients.langchain_host = (await hostClient(langchainHost.url)).client;
  if (withGrounding) {
    const grounding = { enabled: true, mode: 'balanced', allow_general_knowledge: true };
    const agent = await admin.request('POST', '/agents', {
      name: 'Bench grounded',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      response_grounding_config: grounding,
      ...MODEL,
    });
    clients.grounded = { fields: { agent_id: agent.agent_id }, issued: true };
  }
  if (withKnowledge) clients.knowledge = { fields: { agent_id: await knowledgeAgent(admin) }, issued: true };
  if (withAgent) {
    // The other two ways into the same pipeline, in the same run: the model path and the agent's customers over socket.io.
    clients.model = { fields: MODEL, headers: { cookie: admin.cookie } };
    clients.socket = { socket: { agentId: clients.host.fields.agent_id } };
  }
  const sides = [
    ['openai_sdk', openaiUrl],
    ['baseline', baselineUrl],
    ['host', hostUrl],
    ...(withAgent ? HOST_PATHS.map((side) => [side, hostUrl]) : []),
    ...(withGrounding ? [['grounded', hostUrl]] : []),
    ...(withKnowledge ? [['knowledge', hostUrl]] : []),
    ...(langchainHost ? [['langchain_host', langchainHost.url]] : []),
  ];

  // The CPU seconds so far of the processes a side's turns run through: its server (a host with its Postgres and
  // Chroma), the fake model and the load generator.
  const hostCpu = (h) => {
    const chroma = hostChildMatching(h, /chroma/i);
    return () => hostCpuSeconds(h, chroma);
  };
  const serverCpu = {
    openai_sdk: () => ({ server: cpuSeconds(openaiBaseline.child.pid) }),
    baseline: () => ({ server: cpuSeconds(langchainBaseline.child.pid) }),
    host: hostCpu(host),
    grounded: hostCpu(host),
    knowledge: hostCpu(host),
    model: hostCpu(host),
    socket: hostCpu(host),
    ...(langchainHost && { langchain_host: hostCpu(langchainHost) }),
  };
  const cpuOf = (side) => ({ ...serverCpu[side](), 'fake model': cpuSeconds(model.child.pid), 'load generator': cpuSeconds(loadgen.pid) });

  // Both sides must answer the fake model's 20 tokens, then `done`, before anything is measured.
  const verified = {};
  for (const [side, url] of sides) {
    const { result } = await ask(loadgen, { type: 'verify', url, label: `verify-${side}`, ...clients[side] }, 'verified', 60_000);
    verified[side] = { tokens: result.tokens, text_matches: result.text === model.expected, done: result.done, error: result.error, status: result.status };
    // A socket customer gets the reply whole (no token stream): its text is checked, not its tokens.
    const streamed = !clients[side].socket;
    if ((streamed && result.tokens !== 20) || result.text !== model.expected || !result.done || result.error !== null) {
      throw new Error(`${side} reply is not the fake model's 20 tokens then done: ${JSON.stringify(result)}`);
    }
  }
  summary.verified = verified;
  console.log('verified: baseline and host each streamed the 20 tokens, then done\n');

  // The verification requests, one per side of the first host.
  const firstHost = (side) => ['host', 'grounded', 'knowledge', ...HOST_PATHS].includes(side);
  let hostSent = sides.filter(([side]) => firstHost(side)).length;
  let hostOk = hostSent;
  for (const concurrency of concurrencies) {
    const point = { concurrency };
    /** Per side, over its rounds: the merged replies, requests sent, model calls and CPU seconds by process. */
    const measured = {};
    for (let round = 0; round < rounds; round++) {
      for (const [side, url] of sides) {
        const before = await modelCount();
        const cpuBefore = cpuOf(side);
        const from = profileClockUs();
        if (firstHost(side)) waits?.open(`${side} c=${concurrency}`);
        const reply = await ask(
          loadgen,
          { type: 'run', url, concurrency, seconds, warmupSeconds, label: `${side}-c${concurrency}`, ...clients[side] },
          'result',
          (seconds + warmupSeconds) * 1000 + 120_000,
        );
        waits?.close();
        if (firstHost(side)) (hostWindows[side] ??= []).push([from, profileClockUs()]);
        const requests = reply.measured.counts.sent + (reply.warmup?.counts.sent ?? 0);
        const modelCalls = (await modelCount()) - before;
        // Warm-up included: the CPU readings span it too.
        const cpu = cpuSpent(cpuBefore, cpuOf(side));
        const sofar = measured[side];
        measured[side] = {
          reply: mergeReplies(sofar?.reply, reply),
          requests: (sofar?.requests ?? 0) + requests,
          modelCalls: (sofar?.modelCalls ?? 0) + modelCalls,
          cpu: addCounts(sofar?.cpu ?? {}, cpu),
        };
        if (firstHost(side)) {
          hostSent += requests;
          hostOk += reply.measured.counts.ok + (reply.warmup?.counts.ok ?? 0);
        }
      }
    }
    for (const [side] of sides) {
      const { reply, requests, modelCalls, cpu } = measured[side];
      point[side] = summarize(reply, seconds * rounds);
      point[side].model_calls_per_request = modelCalls / requests;
      point[side].cpu_ms_per_turn = Object.fromEntries(Object.entries(cpu).map(([name, s]) => [name, (s / requests) * 1000]));
      const s = point[side];
      console.log(
        `c=${String(concurrency).padEnd(3)} ${side.padEnd(8)} ${fmt(s.turns_per_s).padStart(8)} turns/s  ttft p50 ${fmt(s.ttft_p50_ms).padStart(7)} ms  p99 ${fmt(s.ttft_p99_ms).padStart(7)} ms  ` +
          `completion p50 ${fmt(s.completion_p50_ms).padStart(7)} ms  failed ${s.failed}${s.failed ? ' ' + JSON.stringify(s.failures) : ''}`,
      );
    }
    const against = (baseline) => ({
      turns_per_s: ratio(point.host.turns_per_s, baseline.turns_per_s),
      ttft_p50: ratio(point.host.ttft_p50_ms, baseline.ttft_p50_ms),
      ttft_p50_added_ms: point.host.ttft_p50_ms - baseline.ttft_p50_ms,
      ttft_p99: ratio(point.host.ttft_p99_ms, baseline.ttft_p99_ms),
      completion_p50: ratio(point.host.completion_p50_ms, baseline.completion_p50_ms),
    });
    point.ratios = against(point.baseline);
    point.ratios_openai_sdk = against(point.openai_sdk);
    if (point.langchain_host) point.models_openai_over_langchain = ratio(point.host.turns_per_s, point.langchain_host.turns_per_s);
    if (point.grounded) {
      point.grounding = {
        turns_per_s: ratio(point.grounded.turns_per_s, point.host.turns_per_s),
        ttft_p50_added_ms: point.grounded.ttft_p50_ms - point.host.ttft_p50_ms,
        ttft_p99_added_ms: point.grounded.ttft_p99_ms - point.host.ttft_p99_ms,
      };
    }
    if (withAgent)
      point.paths_over_openai_sdk = Object.fromEntries(
        ['host', ...HOST_PATHS, 'knowledge'].filter((side) => point[side]).map((side) => [side, ratio(point[side].turns_per_s, point.openai_sdk.turns_per_s)]),
      );
    if (point.knowledge) {
      point.knowledge_mount = {
        turns_per_s: ratio(point.knowledge.turns_per_s, point.host.turns_per_s),
        turns_per_s_openai_sdk: ratio(point.knowledge.turns_per_s, point.openai_sdk.turns_per_s),
        ttft_p50_added_ms: point.knowledge.ttft_p50_ms - point.host.ttft_p50_ms,
      };
    }
    summary.points.push(point);
  }

  if (leakTurns > 0) {
    summary.leak_check = await leakCheck(loadgen, hostUrl, clients.host, host.pid);
    hostSent += summary.leak_check.sent;
    hostOk += summary.leak_check.turns;
  }

  if (waits) {
    summary.pg_waits = waits.report();
    await waits.stop();
  }

  // Every host turn is persisted before its `done`: count the rows through the embedded Postgres.
  const db = await hostDatabase(host);
  try {
    const { rows } = await db.query('SELECT status, count(*)::int AS n FROM conversation_turns GROUP BY status ORDER BY status');
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    const sessions = (await db.query('SELECT count(*)::int AS n FROM chat_sessions')).rows[0].n;
    const messages = (await db.query('SELECT count(*)::int AS n FROM chat_messages')).rows[0].n;
    const snapshots = (await db.query('SELECT count(*)::int AS n FROM turn_context_snapshots')).rows[0].n;
    const settings = (
      await db.query("SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections', 'wal_level')")
    ).rows;
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
  summary.host_stop = await stopHost(host);
  if (langchainHost) await stopHost(langchainHost);
}

/** A public agent with one mounted source of `knowledgeChunks` generated paragraphs, ingested; its id. */
async function knowledgeAgent(admin) {
  const text = textGenerator(1);
  const { source_id: sourceId } = await admin.request('POST', '/knowledge-sources', {
    name: 'bench-stream',
    chunking_strategy: 'recursive_character',
    chunking_params: { chunk_size: 400, chunk_overlap: 0 },
  });
  const paragraphs = Array.from({ length: knowledgeChunks }, () => text.paragraph(250, 390));
  await admin.upload(`/knowledge-sources/${sourceId}/documents`, {
    filename: 'handbook.txt',
    contentType: 'text/plain',
    data: new TextEncoder().encode(paragraphs.join('\n\n')),
  });
  const job = await ingestAndWait(admin, sourceId);
  if (job.status !== 'succeeded') throw new Error(`the knowledge source's ingestion ${job.status}: ${job.error_message}`);
  const agent = await admin.request('POST', '/agents', { name: 'Bench knowledge', agent_type: 'chat', public_access_mode: 'public_anonymous', ...MODEL });
  await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: sourceId });
  return agent.agent_id;
}

/**
 * The host alone at c=64 in 10 s windows until `leakTurns` turns, its RSS sampled every 250 ms: the median of the window
 * in which the 10,000th turn completed against the median of the last window.
 */
async function leakCheck(loadgen, url, client, pid) {
  const windows = [];
  let turns = 0;
  let sent = 0;
  const started = Date.now();
  while (turns < leakTurns) {
    const rss = [];
    const sampler = setInterval(() => rss.push(rssKiB(pid)), 250);
    const reply = await ask(loadgen, { type: 'run', url, concurrency: 64, seconds: 10, warmupSeconds: 0, label: 'leak', ...client }, 'result', 180_000);
    clearInterval(sampler);
    turns += reply.measured.counts.ok;
    sent += reply.measured.counts.sent;
    const sorted = rss.filter((v) => v !== null).sort((a, b) => a - b);
    windows.push({ turns, rss_mib: sorted[sorted.length >> 1] / 1024, failed: reply.measured.counts.failed });
    console.log(`leak check: ${turns} turns, host RSS ${fmt(windows.at(-1).rss_mib)} MiB`);
  }
  const early = windows.find((w) => w.turns >= 10_000) ?? windows[0];
  const last = windows.at(-1);
  return {
    turns,
    sent,
    failed: windows.reduce((n, w) => n + w.failed, 0),
    seconds: (Date.now() - started) / 1000,
    rss_mib_after_10k: early.rss_mib,
    rss_mib_at_end: last.rss_mib,
    growth: ratio(last.rss_mib, early.rss_mib),
    windows,
  };
}

function report() {
  // The host's own points only: over the whole run it mostly waits while the baselines are measured.
  if (profileDir) {
    summary.host_cpu_profile = Object.fromEntries(Object.entries(hostWindows).map(([side, windows]) => [side, hottest(profileDir, 10, windows)]));
    for (const [side, hot] of Object.entries(summary.host_cpu_profile)) {
      console.log(`\nthe host while it served the ${side} side:`);
      printHottest(hot);
    }
  }
  const table = markdownTable(
    `POST /stream, 20 tokens from a zero-latency fake model, closed loop, ${rounds > 1 ? `${rounds} rounds of ${seconds} s, sides in turn,` : `${seconds} s`} per point (${os.cpus().length} CPUs, load generator on the same machine); host requests: ${summary.host_requests}`,
    [
      'concurrency',
      'openai SDK turns/s',
      'LangChain turns/s',
      'host turns/s',
      'host/openai SDK',
      'host/LangChain',
      ...(withLangchainHost ? ['host on LangChain turns/s', 'host/host on LangChain'] : []),
      'openai SDK p50 TTFT ms',
      'host p50 TTFT ms',
      'host added p50 ms',
      'openai SDK p99 TTFT ms',
      'host p99 TTFT ms',
    ],
    summary.points.map(
      ({ concurrency, openai_sdk: o, baseline: b, host: h, ratios: r, ratios_openai_sdk: ro, langchain_host: l, models_openai_over_langchain: m }) => [
        concurrency,
        fmt(o.turns_per_s),
        fmt(b.turns_per_s),
        fmt(h.turns_per_s),
        fmt(ro.turns_per_s, 2),
        fmt(r.turns_per_s, 2),
        ...(withLangchainHost ? [fmt(l.turns_per_s), fmt(m, 2)] : []),
        fmt(o.ttft_p50_ms),
        fmt(h.ttft_p50_ms),
        fmt(ro.ttft_p50_added_ms, 2),
        fmt(o.ttft_p99_ms),
        fmt(h.ttft_p99_ms),
      ],
    ),
  );
  summary.table = table;
  const cpu = (c) => Object.values(c).reduce((a, b) => a + b, 0);
  const cpuTable = markdownTable(
    `CPU ms per turn, warm-ups included (${os.cpus().length} CPUs: turns/s cannot pass ${os.cpus().length * 1000} over a side's total)`,
    [
      'concurrency',
      'openai SDK proxy',
      'its fake model + load generator',
      'its total',
      'host',
      'host Postgres',
      'host Chroma',
      'its fake model + load generator',
      'its total',
    ],
    summary.points.map(({ concurrency, openai_sdk: { cpu_ms_per_turn: o }, host: { cpu_ms_per_turn: h } }) => [
      concurrency,
      fmt(o.server, 2),
      fmt(o['fake model'] + o['load generator'], 2),
      fmt(cpu(o), 2),
      fmt(h.host, 2),
      fmt(h.postgres, 2),
      fmt(h.chroma, 2),
      fmt(h['fake model'] + h['load generator'], 2),
      fmt(cpu(h), 2),
    ]),
  );
  summary.cpu_table = cpuTable;
  const pathNames = {
    host: 'agent path (POST /stream)',
    model: 'model path (POST /stream, no agent)',
    knowledge: 'agent path, one knowledge mount',
    socket: 'agent path over socket.io',
  };
  const pathsTable =
    withAgent &&
    markdownTable(
      `The host's paths against the openai SDK proxy, in the same run (over socket.io the customer gets the reply whole: its time to first token is the time to the reply's message event)`,
      ['concurrency', 'path', 'turns/s', 'x openai SDK proxy', 'p50 TTFT ms', 'p99 TTFT ms', 'added p50 TTFT ms', 'host CPU ms/turn', 'Postgres CPU ms/turn'],
      summary.points.flatMap((q) =>
        Object.entries(q.paths_over_openai_sdk).map(([side, x]) => [
          q.concurrency,
          pathNames[side],
          fmt(q[side].turns_per_s),
          fmt(x, 2),
          fmt(q[side].ttft_p50_ms),
          fmt(q[side].ttft_p99_ms),
          fmt(q[side].ttft_p50_ms - q.openai_sdk.ttft_p50_ms, 2),
          fmt(q[side].cpu_ms_per_turn.host, 2),
          fmt(q[side].cpu_ms_per_turn.postgres, 2),
        ]),
      ),
    );
  if (pathsTable) summary.paths_table = pathsTable;
  const waitsTable = summary.pg_waits && pgWaitsTable(summary.pg_waits);
  if (waitsTable) summary.pg_waits_table = waitsTable;
  for (const { concurrency, grounded: g, grounding } of summary.points.filter((q) => q.grounded)) {
    console.log(
      `c=${concurrency} grounded agent: ${fmt(g.turns_per_s)} turns/s (${fmt(grounding.turns_per_s, 2)}x the agent without grounding), ` +
        `p50 TTFT ${fmt(g.ttft_p50_ms)} ms (+${fmt(grounding.ttft_p50_added_ms, 2)} ms), p99 TTFT ${fmt(g.ttft_p99_ms)} ms (+${fmt(grounding.ttft_p99_added_ms, 2)} ms)`,
    );
  }
  for (const { concurrency, knowledge: k, knowledge_mount: m } of summary.points.filter((q) => q.knowledge)) {
    console.log(
      `c=${concurrency} agent with a knowledge mount: ${fmt(k.turns_per_s)} turns/s (${fmt(m.turns_per_s, 2)}x the agent without, ${fmt(m.turns_per_s_openai_sdk, 2)}x the openai SDK proxy), ` +
        `p50 TTFT ${fmt(k.ttft_p50_ms)} ms (+${fmt(m.ttft_p50_added_ms, 2)} ms)`,
    );
  }
  const p = summary.persistence;
  console.log(`\n${table}\n\n${cpuTable}\n`);
  if (pathsTable) console.log(`${pathsTable}\n`);
  if (waitsTable) console.log(`${waitsTable}\n`);
  console.log(
    `persisted: ${p.conversation_turns} conversation_turns (${JSON.stringify(p.conversation_turns_by_status)}) for ${p.host_replies_completed} completed host replies ` +
      `of ${p.host_requests_sent} sent (warm-ups, measured windows and the verification request): ${p.completed_turns_match_completed_replies ? 'match' : 'MISMATCH'}; ` +
      `${p.chat_sessions} sessions, ${p.chat_messages} messages, ${p.turn_context_snapshots} context snapshots`,
  );
  console.log(`model calls per host request: ${summary.points.map((q) => fmt(q.host.model_calls_per_request, 2)).join(', ')}`);
  const leak = summary.leak_check;
  if (leak) {
    console.log(
      `leak check: ${leak.turns} turns at c=64 in ${fmt(leak.seconds)} s (${leak.failed} failed); host RSS ${fmt(leak.rss_mib_after_10k)} MiB after 10k turns, ` +
        `${fmt(leak.rss_mib_at_end)} MiB at the end: ${fmt(leak.growth, 3)}x (target within 1.10x)`,
    );
  }
  console.log(
    `host stop: exit ${summary.host_stop?.exit} in ${summary.host_stop?.stop_ms} ms; leftover processes killed: ${summary.host_stop?.leftovers.length ?? 0}`,
  );
}

await runBench(withKnowledge ? 'stream-knowledge' : withGrounding ? 'stream-grounding' : withAgent ? 'stream-agent' : 'stream', { summary, main, report });
process.exit(0);
