// The bare baselines of the stream benchmark: a minimal restify SSE server whose POST /stream calls the model through
// one client, with the options the host's `openai` providers use (streaming, usage on, no retries), and writes each
// token as `data: {"type":"token",...}` then `done`. No validation, sessions or persistence. Run as a child of run.mjs
// (IPC) with the model base URL as argv[2] and the client as argv[3]: `openai` (the official SDK's chat completions,
// as models-openai) or `langchain` (LangChain `ChatOpenAI`'s `stream()`, as a minimal LangChain handler would). Sends
// {port} when listening; exits when the parent goes away.
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage } from '@langchain/core/messages';
import OpenAI from 'openai';
import restify from 'restify';

const [baseURL, client = 'langchain'] = process.argv.slice(2);

/** The model's tokens for `message`, as the client streams them. */
let tokens;
if (client === 'openai') {
  const openai = new OpenAI({ baseURL, apiKey: 'bench-key', timeout: 60_000, maxRetries: 0 });
  tokens = async function* (message, signal) {
    const stream = await openai.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: message }], stream: true, stream_options: { include_usage: true } },
      { signal },
    );
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta?.content;
      if (content) yield content;
    }
  };
} else if (client === 'langchain') {
  const model = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'bench-key', configuration: { baseURL }, timeout: 60_000, maxRetries: 0, streamUsage: true });
  tokens = async function* (message, signal) {
    for await (const chunk of await model.stream([new HumanMessage(message)], { signal })) {
      if (typeof chunk.content === 'string' && chunk.content) yield chunk.content;
    }
  };
} else {
  throw new Error(`unknown client ${client}: openai or langchain`);
}

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
    for await (const content of tokens(String(req.body?.message ?? ''), disconnected.signal)) res.write(event({ type: 'token', content }));
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
