#!/usr/bin/env node
// Fusion benchmark: public runs through the API key path on the zero-latency fake model, against a bare script that
// calls the model with the same prompt (the floor), in one run:
//   fake model: ../stream/fake-model.mjs (OpenAI-compatible; a `fusion_output` structured output streamed in 24 pieces)
//   host:       `agent-host start` on a fresh data dir; a published fusion agent (one text input, one structured_json
//               output with a schema) on the fake model, `public_access_mode=public_api_key`, one key; `--concurrency`
//               callers each POST /public/agents/{id}/fusion-runs (waiting for the result) for `--seconds`
//   floor:      this script streaming the same request body (messages and response_format) from the fake model and
//               parsing the JSON, with the same callers
// Reports runs/s and p50/p99 latency of both, their ratio, and the p50 latency the host adds. Run by hand after
// `npm run build`:
//   node bench/fusion/run.mjs [--seconds 10] [--concurrency 1,16]
// Writes bench/results/fusion.json.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, machine, runBench, startHelper, startHost } from '../lib/host.mjs';
import { adminClient, adminEnv } from '../lib/admin.mjs';
import { fmt, latencySummary, ratio } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(arg('--seconds', 10));
const levels = String(arg('--concurrency', '1,16')).split(',').map(Number);
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
if (!(seconds > 0) || !levels.every((n) => Number.isInteger(n) && n > 0)) {
  console.error('usage: node bench/fusion/run.mjs [--seconds N] [--concurrency 1,16]');
  process.exit(2);
}

const SCHEMA = { type: 'object', required: ['name', 'total'], properties: { name: { type: 'string' }, total: { type: 'number' } } };
const DEFINITION = {
  instructions: 'Extract the fields.',
  input_slots: [{ name: 'text', kind: 'text' }],
  output_slots: [{ name: 'fields', kind: 'structured_json', structured_output_schema: SCHEMA }],
};
const INPUT = 'name: Acme Ltd\ntotal: 129.50';

/** `callers` loops of `call` for `seconds`: completions per second and latency. */
async function load(callers, call) {
  const latencies = [];
  const until = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (Date.now() < until) {
        const t0 = performance.now();
        await call();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { runs_per_s: latencies.length / ((Date.now() - started) / 1000), ...latencySummary(latencies) };
}

const summary = { date: new Date().toISOString(), machine: machine(), seconds, levels, results: [] };

await runBench('fusion', {
  summary,
  async main() {
    const fake = await startHelper(path.join(here, '../stream/fake-model.mjs'));
    const modelUrl = `http://127.0.0.1:${fake.port}/v1`;
    const host = await startHost({
      name: 'fusion',
      env: {
        ...adminEnv(ADMIN),
        OPENAI_API_KEY: 'bench-key',
        'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': JSON.stringify(modelUrl),
        // The bench measures the host, not its per-key limit.
        AGENT_HOST__FUSION__API_KEY_REQUESTS_PER_MINUTE: '0',
      },
    });
    const admin = await adminClient(host.url, ADMIN);
    const agent = await admin.request('POST', '/agents', {
      name: 'Fusion bench',
      agent_type: 'fusion',
      public_access_mode: 'public_api_key',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      fusion_definition: DEFINITION,
    });
    await admin.request('POST', `/agents/${agent.agent_id}/publish`);
    const { api_key: key } = await admin.request('POST', `/agents/${agent.agent_id}/public-api-keys`, { label: 'bench' });
    const url = `${host.url}/public/agents/${agent.agent_id}/fusion-runs`;
    const body = JSON.stringify({ inputs: { text: INPUT } });
    const publicRun = async () => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-agent-api-key': key }, body });
      const run = await res.json();
      if (res.status !== 201 || run.status !== 'succeeded') throw new Error(`run: ${res.status} ${JSON.stringify(run).slice(0, 300)}`);
    };
    // The floor sends what the host sent for that run: its prompt messages and structured-output request.
    await publicRun();
    const [first] = (await admin.request('GET', `/agents/${agent.agent_id}/fusion-runs?limit=1`)).items;
    const request = JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      temperature: 0,
      messages: first.governance_context.prompt_messages,
      response_format: { type: 'json_schema', json_schema: { name: 'fusion_output', strict: false, schema: {} } },
    });
    const floorCall = async () => {
      const res = await fetch(`${modelUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request });
      let text = '';
      for (const line of (await res.text()).split('\n')) {
        if (!line.startsWith('data: {')) continue;
        text += JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '';
      }
      JSON.parse(text);
    };
    for (const callers of levels) {
      await load(callers, publicRun); // warm-up pass of the same length is too long: one short one
      const hostRun = await load(callers, publicRun);
      const floor = await load(callers, floorCall);
      const row = {
        concurrency: callers,
        host: hostRun,
        floor,
        ratio: ratio(hostRun.runs_per_s, floor.runs_per_s),
        added_p50_ms: hostRun.p50_ms - floor.p50_ms,
      };
      summary.results.push(row);
      console.log(
        `c=${callers}: host ${fmt(hostRun.runs_per_s)} runs/s (p50 ${fmt(hostRun.p50_ms)} ms, p99 ${fmt(hostRun.p99_ms)} ms); ` +
          `floor ${fmt(floor.runs_per_s)} calls/s (p50 ${fmt(floor.p50_ms)} ms); ${fmt(row.ratio, 2)}x; +${fmt(row.added_p50_ms)} ms p50`,
      );
    }
  },
  report() {
    for (const r of summary.results)
      console.log(
        `c=${r.concurrency}: ${fmt(r.host.runs_per_s)} vs ${fmt(r.floor.runs_per_s)} runs/s = ${fmt(r.ratio, 2)}x of the floor; host adds ${fmt(r.added_p50_ms)} ms at p50`,
      );
  },
});
process.exit(0);
