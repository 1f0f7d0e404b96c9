// The web console in Debian's Chromium (playwright-core) against the host (fresh data dir, default configuration):
//   bundle:      the bytes a first visit downloads (index.html's script and style, gzipped as the host serves them)
//   agents page: time from navigation to the first row of the agents list (`--agents` agents), with a cold cache
//                (a new browser context each time) and a warm one (the same context again), median of `--visits`
//   playground:  a reply of 20 tokens from the fake model (`stream/fake-model.mjs`) `--token-gap` ms apart; for each
//                chunk of the SSE body, the time from its arrival (the page's stream reader) to the reply's text
//                changing in the DOM, and whether that happened before the next animation frame (the same frame)
// Needs `npm run build` and /usr/bin/chromium (`npm test` installs it).
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { adminClient, adminEnv } from '../lib/admin.mjs';
import { arg, machine, root, runBench, startHelper, startHost } from '../lib/host.mjs';
import { fmt, markdownTable, median, percentile } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const ADMIN = { username: 'bench-admin', password: 'bench console password 1' };
const agentCount = Number(arg('--agents', 50));
const visits = Number(arg('--visits', 10));
const tokenGap = Number(arg('--token-gap', 50));
const turns = Number(arg('--turns', 5));

const summary = { bench: 'console', at: new Date().toISOString(), machine: machine(), agents: agentCount, visits, token_gap_ms: tokenGap, turns };

/** The body of `url` as the host sends it to a browser that takes gzip (not inflated). */
const gzippedSize = (url) =>
  new Promise((resolve, reject) => {
    request(url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'] ?? 'identity' }));
    })
      .on('error', reject)
      .end();
  });

// Installed in the page before its own scripts: chunk arrivals of the stream reader, the reply's text changes and
// the first agents row as they happen in the DOM, and every animation frame.
const INSTRUMENT = () => {
  const bench = { chunks: [], texts: [], frames: [], firstRow: null, lastText: null };
  window.__bench = bench;
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function () {
    return read.call(this).then((result) => {
      if (!result.done) bench.chunks.push(performance.now());
      return result;
    });
  };
  // When each frame's callbacks ran (not the frame's start time, which can precede work still running in a task and
  // painted in that same frame): a frame that ran between a chunk's arrival and its text is one that missed it.
  const frame = () => {
    bench.frames.push(performance.now());
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  new MutationObserver(() => {
    const now = performance.now();
    if (bench.firstRow === null && document.querySelector('tbody tr')) bench.firstRow = now;
    const reply = document.querySelector('.message.assistant:last-child p');
    if (reply && reply.textContent && reply.textContent !== bench.lastText) {
      bench.lastText = reply.textContent;
      bench.texts.push(now);
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
};

async function main() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run npm test once (it installs Debian's chromium) or apt-get install chromium`);
  const model = await startHelper(path.join(here, '..', 'stream', 'fake-model.mjs'), ['0', String(tokenGap)]);
  const host = await startHost({
    name: 'console',
    env: {
      OPENAI_API_KEY: 'bench-key',
      'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': JSON.stringify(`http://127.0.0.1:${model.port}/v1`),
      ...adminEnv(ADMIN),
    },
  });
  const admin = await adminClient(host.url, ADMIN);
  for (let i = 0; i < agentCount; i++) {
    await admin.request('POST', '/agents', { name: `Agent ${i}`, agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' });
  }
  const agent = (await admin.request('GET', '/agents?limit=1')).items[0];

  const html = readFileSync(path.join(root, 'console', 'dist', 'index.html'), 'utf8');
  const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
  summary.bundle = [];
  for (const asset of assets) summary.bundle.push({ asset, ...(await gzippedSize(host.url + asset)) });
  summary.initial_js_gzip_bytes = summary.bundle.filter((b) => b.asset.endsWith('.js')).reduce((n, b) => n + b.bytes, 0);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const cookies = admin.cookie.split('; ').map((pair) => {
      const [name, ...value] = pair.split('=');
      return { name, value: value.join('='), url: host.url };
    });
    const newContext = async () => {
      const context = await browser.newContext({ baseURL: host.url });
      await context.addCookies(cookies);
      await context.addInitScript(INSTRUMENT);
      return context;
    };
    const firstRowAt = async (page) => {
      await page.goto('/console/agents');
      await page.locator('tbody tr').first().waitFor();
      return page.evaluate(() => window.__bench.firstRow);
    };
    const cold = [];
    const warm = [];
    for (let i = 0; i < visits; i++) {
      const context = await newContext();
      const page = await context.newPage();
      cold.push(await firstRowAt(page));
      warm.push(await firstRowAt(page));
      await context.close();
    }
    summary.agents_page_ms = { cold: median(cold), warm: median(warm), cold_all: cold, warm_all: warm };

    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`/console/playground?agent=${agent.agent_id}`);
    const delays = [];
    let sameFrame = 0;
    let chunkCount = 0;
    for (let turn = 0; turn < turns; turn++) {
      await page.evaluate(() => Object.assign(window.__bench, { chunks: [], texts: [], frames: [], lastText: null }));
      await page.getByLabel('Message').fill(`Question ${turn}`);
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('button', { name: 'Inspect' }).nth(turn).waitFor();
      const { chunks, texts, frames } = await page.evaluate(() => window.__bench);
      for (const arrived of chunks) {
        const shown = texts.find((at) => at >= arrived);
        if (shown === undefined) continue; // a chunk with no text (the done event, the role delta)
        chunkCount++;
        delays.push(shown - arrived);
        if (!frames.some((at) => at > arrived && at < shown)) sameFrame++;
      }
    }
    delays.sort((a, b) => a - b);
    summary.token_to_dom_ms = { p50: percentile(delays, 50), p95: percentile(delays, 95), max: delays.at(-1), chunks: chunkCount, same_frame: sameFrame };
  } finally {
    await browser.close();
  }
}

function report() {
  console.log(
    markdownTable(
      'Console bundle, as served to a first visit (gzip)',
      ['asset', 'bytes', 'encoding'],
      summary.bundle.map((b) => [b.asset, String(b.bytes), b.encoding]),
    ),
  );
  console.log(`initial JavaScript: ${fmt(summary.initial_js_gzip_bytes / 1024)} KiB gzipped (target under 300 KB)`);
  const a = summary.agents_page_ms;
  console.log(`agents page, navigation to the first of ${agentCount} rows: cold ${fmt(a.cold)} ms, warm ${fmt(a.warm)} ms (median of ${visits})`);
  const d = summary.token_to_dom_ms;
  console.log(
    `playground, chunk arrival to the reply's text in the DOM: p50 ${fmt(d.p50, 2)} ms, p95 ${fmt(d.p95, 2)} ms, max ${fmt(d.max, 2)} ms; ` +
      `${d.same_frame} of ${d.chunks} chunks before the next animation frame`,
  );
}

await runBench('console', { summary, main, report });
