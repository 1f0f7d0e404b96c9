// Issue 17's "done when": hostile documents ingested by a running host each fail with a reason while a chat stream
// on the same host keeps its tokens flowing, and the host's memory stays under the documented ceiling.
import t from 'tap';
import { amplifyingCsv, deepHtml, docxBomb } from '../fixtures/hostile-documents.js';
import { manyPagePdf } from '../fixtures/many-page-pdf.js';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, DOCX, uploadOk, waitForJob } from '../helpers/knowledge.js';

// parse_workers × parse_memory_mb (docs/operations.md), the most parsing may add to the host's memory.
const CEILING_MB = 2 * 512;
const TOKENS = 100;

/** Streams a reply and resolves with the longest pause between two of its tokens, in ms. */
async function longestTokenGap(url: string, body: unknown, cookie: string): Promise<{ gapMs: number; tokens: number }> {
  const response = await fetch(`${url}/stream`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let last: number | undefined;
  let gapMs = 0;
  let tokens = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    const events = buffered.split('\n\n');
    buffered = events.pop()!;
    for (const event of events) {
      if (!event.startsWith('data: ') || JSON.parse(event.slice(6)).type !== 'token') continue;
      const now = performance.now();
      if (last !== undefined) gapMs = Math.max(gapMs, now - last);
      last = now;
      tokens++;
    }
  }
  return { gapMs, tokens };
}

t.test('hostile documents fail with their reasons while a chat stream on the same host keeps flowing', async (t) => {
  const fixture = await startOpenAiFixture();
  t.teardown(() => fixture.close());
  // 100 tokens, 50 ms apart: a 5 s reply that overlaps the parses.
  fixture.setRespond(() => ({ chunks: Array.from({ length: TOKENS }, (_, i) => `t${i} `), chunkDelayMs: 50 }));
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
    })
  ).body;
  const source = await createSource(admin);
  const hostile = [
    {
      filename: 'bomb.docx',
      contentType: DOCX,
      data: await docxBomb(),
      reason: /bomb\.docx: word\/document\.xml inflates \d+ times \(limit 100\).*zip_max_ratio/,
    },
    {
      filename: 'wide.csv',
      contentType: 'text/csv',
      data: amplifyingCsv(),
      reason: /wide\.csv: its rows expand to more than 20000000 characters.*max_text_chars/,
    },
    { filename: 'deep.html', contentType: 'text/html', data: deepHtml(), reason: /deep\.html: its elements nest \d+ deep \(limit 500\).*html_max_depth/ },
    {
      filename: 'pages.pdf',
      contentType: 'application/pdf',
      data: manyPagePdf(100_000),
      reason: /pages\.pdf: it has 100000 pages \(limit 5000\).*pdf_max_pages/,
    },
  ];
  const ids = new Map<string, string>();
  for (const document of hostile) ids.set((await uploadOk(admin, source.source_id, document)).document_id, document.filename);

  const baselineRss = process.memoryUsage().rss;
  let peakRss = baselineRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const started = await admin.request('POST', `/knowledge-sources/${source.source_id}/ingest`);
  t.equal(started.status, 202);
  const [chat, job] = await Promise.all([
    longestTokenGap(host.url, { thread_id: 'during-ingestion', agent_id: agent.agent_id, message: 'Talk to me while you read.' }, admin.cookieHeader('/')),
    waitForJob(admin, started.body.job_id, 120_000),
  ]);
  clearInterval(sampler);

  t.equal(chat.tokens, TOKENS, 'every token of the reply arrived');
  t.ok(chat.gapMs < 500, `the longest pause between tokens was ${Math.round(chat.gapMs)} ms (the model sends one every 50 ms)`);
  t.match(job, { status: 'failed', documents_failed: hostile.length }, 'each hostile document failed');
  for (const document of hostile) {
    const result = job.document_results.find((r: { document_id: string }) => ids.get(r.document_id) === document.filename);
    t.match(result, { status: 'failed', error: document.reason }, `${document.filename}: ${result?.error}`);
  }
  const growthMb = (peakRss - baselineRss) / 1024 / 1024;
  t.ok(growthMb < CEILING_MB, `the process grew by ${Math.round(growthMb)} MB at most, under the ${CEILING_MB} MB parsing may take`);
  t.equal((await fetch(`${host.url}/healthz`)).status, 200, 'and the host is healthy');
});
