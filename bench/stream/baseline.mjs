// The bare baseline of the stream benchmark: a minimal restify SSE server whose POST /stream calls
// the model through LangChain `ChatOpenAI` (streaming, usage on, no retries: the options the host's
// `openai` provider uses) and writes each token as `data: {"type":"token",...}` then `done`. No
// validation, sessions or persistence. Run as a child of run.mjs (IPC) with the model base URL as
// argv[2]; sends {port} when listening; exits when the parent goes away.
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage } from '@langchain/core/messages';
import restify from 'restify';

const baseURL = process.argv[2];
const model = new ChatOpenAI({
  model: 'gpt-4o-mini',
  apiKey: 'bench-key',
  configuration: { baseURL },
  timeout: 60_000,
  maxRetries: 0,
  streamUsage: true,
});

const server = restify.createServer({ handleUncaughtExceptions: false });
server.use(restify.plugins.bodyParser({ mapParams: false }));

const event = (e) => `data: ${JSON.stringify(e)}\n\n`;

server.post('/stream', async (req, res) => {
  const disconnected = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) disconnected.abort();
  });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  try {
    const stream = await model.stream([new HumanMessage(String(req.body?.message ?? ''))], { signal: disconnected.signal });
    for await (const chunk of stream) {
      if (typeof chunk.content === 'string' && chunk.content) res.write(event({ type: 'token', content: chunk.content }));
    }
  } catch (error) {
    if (!disconnected.signal.aborted) res.write(event({ type: 'error', content: `the model failed to answer: ${error.message}` }));
  }
  res.end(event({ type: 'done' }));
});

server.listen(0, '127.0.0.1', () => process.send?.({ type: 'listening', port: server.address().port }));
process.on('disconnect', () => {
  server.server.closeAllConnections?.();
  server.close(() => process.exit(0));
});
