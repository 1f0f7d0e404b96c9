// A zero-latency OpenAI-compatible model for the stream benchmark (node:http, no framework).
// POST /v1/chat/completions with `stream: true` answers 20 content deltas, a finish chunk, a usage
// chunk when `stream_options.include_usage` is true, then `data: [DONE]`, written at once (after the optional delay below). Asked for the
// `grounded_answer` structured output, it streams the JSON object with the same 20 tokens as its answer; asked for
// `evaluation_judge` (not streamed), it answers a verdict; asked for `fusion_output` (bench/fusion), it streams
// `{"fields":{"name":"<the 20 tokens>","total":20}}`.
// Run as a child of run.mjs (IPC): sends {port} when listening, answers {type:'count'} with the
// number of completions served; exits when the parent goes away.
import { createServer } from 'node:http';

// A latency before each answer (the first argument, ms; 0 by default): bench/eval compares with a model that takes time.
const DELAY_MS = Number(process.argv[2] ?? 0);
// A gap between streamed tokens (the second argument, ms; 0 by default): bench/console watches each token painted.
const TOKEN_GAP_MS = Number(process.argv[3] ?? 0);
const gap = () => new Promise((resolve) => setTimeout(resolve, TOKEN_GAP_MS));
const TOKENS = Array.from({ length: 20 }, (_, i) => `tok${i} `);
const GROUNDED_PREFIX = ['{"grounded":', 'false,', '"confidence":', '0.5,', '"citations":', '[],', '"answer":"'];
// A structured output's JSON around the same tokens: [before, after] per schema name.
const JSON_FRAMES = {
  grounded_answer: [GROUNDED_PREFIX, ['"}']],
  fusion_output: [
    ['{"fields":', '{"name":"'],
    ['",', '"total":20}}'],
  ],
};

let served = 0;
let sequence = 0;
const created = Math.floor(Date.now() / 1000);

async function stream(res, body) {
  const id = `chatcmpl-bench-${++sequence}`;
  const model = typeof body.model === 'string' ? body.model : 'bench-model';
  const includeUsage = body.stream_options?.include_usage === true;
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"system_fingerprint":"fp_bench",`;
  const usageNull = includeUsage ? ',"usage":null' : '';
  const delta = (d, finish = null) => `data: ${head}"choices":[{"index":0,"delta":${d},"logprobs":null,"finish_reason":${finish}}]${usageNull}}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(delta('{"role":"assistant","content":"","refusal":null}'));
  // A structured output (`grounded_answer`, `fusion_output`): the JSON before the text, then the same 20 tokens as a
  // string inside it, then the rest, as a model writes the JSON piece by piece.
  const frame = JSON_FRAMES[body.response_format?.json_schema?.name];
  for (const piece of frame?.[0] ?? []) res.write(delta(`{"content":${JSON.stringify(piece)}}`));
  for (const token of TOKENS) {
    if (TOKEN_GAP_MS > 0) await gap();
    res.write(delta(`{"content":${JSON.stringify(frame ? JSON.stringify(token).slice(1, -1) : token)}}`));
  }
  for (const piece of frame?.[1] ?? []) res.write(delta(`{"content":${JSON.stringify(piece)}}`));
  res.write(delta('{}', '"stop"'));
  if (includeUsage) {
    res.write(`data: ${head}"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":${TOKENS.length},"total_tokens":${TOKENS.length + 1}}}\n\n`);
  }
  res.end('data: [DONE]\n\n');
  served++;
}

// An evaluation judge's verdict (the host's `evaluation_judge` structured output), for bench/eval.
const JUDGEMENT = JSON.stringify({ score: 1, reason: 'bench', issues: [], improvement_suggestions: [], suggested_better_answer: '', confidence: 1 });

function complete(res, body) {
  const model = typeof body.model === 'string' ? body.model : 'bench-model';
  const content = body.response_format?.json_schema?.name === 'evaluation_judge' ? JUDGEMENT : TOKENS.join('');
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: `chatcmpl-bench-${++sequence}`,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: TOKENS.length, total_tokens: TOKENS.length + 1 },
    }),
  );
  served++;
}

const server = createServer((req, res) => {
  const parts = [];
  req.on('data', (part) => parts.push(part));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
      return;
    }
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json","type":"invalid_request_error"}}');
      return;
    }
    const answer = () => (body.stream === true ? void stream(res, body) : complete(res, body));
    if (DELAY_MS > 0) setTimeout(answer, DELAY_MS);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;

if (process.send) {
  server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port, expected: TOKENS.join('') }));
  process.on('message', (message) => {
    if (message?.type === 'count') process.send({ type: 'count', served });
  });
  process.on('disconnect', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
